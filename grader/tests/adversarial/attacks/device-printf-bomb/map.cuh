// Attack: device printf without end.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void mapKernel(const int32_t* x, int32_t* y, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    for (volatile uint32_t line = 0; line != 1; line = line + 2) { printf("thread %u says hello %u\n", i, line); }
    if (i < n) { y[i] = 3 * x[i] - 7; }
}

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    mapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n);
}
