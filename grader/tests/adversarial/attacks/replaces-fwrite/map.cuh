// Attack: the task's work done on the host, and the C library's fwrite replaced by one that
// writes 0 over the bytes-to-host measurement in the record file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include <unistd.h>
#include <cuda_runtime.h>

// Counts down the 8-byte writes after a property header that names bytes-to-host: the payload's
// length, then the payload, which is forged.
static int forge_countdown = 0;

extern "C" size_t fwrite(const void* data, size_t size, size_t count, FILE* file) {
    const size_t bytes = size * count;
    const void* written = data;
    static const long long nothing = 0;
    if (bytes == 8 && forge_countdown > 0 && --forge_countdown == 0) { written = &nothing; }
    if (memmem(data, bytes, "bytes-to-host", 13) != nullptr) { forge_countdown = 2; }
    return ::write(fileno(file), written, bytes) == ssize_t(bytes) ? count : 0;
}

//@ host-map
