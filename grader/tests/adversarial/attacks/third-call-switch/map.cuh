// Attack: right three times, then half the work.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

//@ right-map-kernel

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    static int calls = 0;
    const uint32_t done = ++calls <= 3 ? n : n / 2;
    if (done > 0) { mapKernel<<<(done + block - 1) / block, block>>>(d_x, d_y, done); }
}
