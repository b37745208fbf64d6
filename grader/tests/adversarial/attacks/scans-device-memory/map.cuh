// Attack: outputs taken from leftover device memory instead of computed.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

__global__ void mapKernel(const int32_t* leftover, int32_t* y, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = leftover[i]; }
}

inline void mapInts(const int32_t* /*d_x*/, int32_t* d_y, uint32_t n, uint32_t block) {
    int32_t* leftover = nullptr;
    cudaMalloc(&leftover, n * sizeof(int32_t));
    mapKernel<<<(n + block - 1) / block, block>>>(leftover, d_y, n);
    cudaDeviceSynchronize();
    cudaFree(leftover);
}
