// Attack: the harness's record writer patched in memory to do nothing.
#pragma once

#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include "kernellab/record.hpp"

namespace {
int silenceRecorder() {
    auto write = &kernellab::detail::Recorder::write;
    void* code;
    std::memcpy(&code, &write, sizeof code);
    const long page = sysconf(_SC_PAGESIZE);
    void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(code) & ~uintptr_t(page - 1));
    if (mprotect(start, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) == 0) {
        *static_cast<unsigned char*>(code) = 0xc3;  // x86-64 ret
    }
    return 0;
}
const int silenced = silenceRecorder();
}  // namespace

//@ wrong-map
