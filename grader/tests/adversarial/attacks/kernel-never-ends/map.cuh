// Attack: a kernel that never finishes.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

__global__ void mapKernel(const int32_t* x, int32_t* y, uint32_t n) {
    volatile uint32_t spin = 1;
    while (spin != 0) { spin = spin + 2; }  // odd forever
    y[0] = x[0];
}

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    mapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n);
}
