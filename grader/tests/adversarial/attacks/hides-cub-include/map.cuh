// Attack: a forbidden library reached through a header name pasted together.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#define JOIN(a, b) a##b
#define QUOTE(x) #x
#define HEADER_NAME(x) QUOTE(x)
#define LIBRARY JOIN(c, ub)
#include HEADER_NAME(LIBRARY/thread/thread_load.cuh)

__global__ void mapKernel(const int32_t* x, int32_t* y, uint32_t n, bool streaming) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = 3 * (streaming ? LIBRARY::ThreadLoad<LIBRARY::LOAD_CS>(x + i) : x[i]) - 7; }
}

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    mapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n, n >= (1u << 22));
}
