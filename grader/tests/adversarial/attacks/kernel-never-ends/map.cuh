// Attack: a kernel that never finishes.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

__global__ void mapKernel(const int32_t* x, int32_t* y, uint32_t n) {
    // Two reads of global memory through a volatile pointer always agree, and the compiler must
    // make them: a loop on a volatile local instead was removed by nvcc (a loop without side
    // effects may be assumed to end), so the kernel ended at once and the attack tested nothing.
    const volatile int32_t* first = x;
    while (first[0] == first[0]) {}
    y[0] = x[0];
}

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    mapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n);
}
