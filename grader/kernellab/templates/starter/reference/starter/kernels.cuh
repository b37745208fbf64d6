// The file students edit. Every function they write carries its task in the doc comment, and
// its body sits between solution markers: the skeleton keeps only the stub.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

/**
 * TASK saxpy: set y[i] = a * x[i] + y[i] for every i < n, one element per thread.
 *
 * The host launches ceil(n / blockDim.x) blocks of any size from 32 to 1024 threads, so the
 * last block may have threads past the end of the arrays: they must neither read nor write,
 * because the memory after y belongs to someone else.
 */
__global__ void saxpyKernel(float a, const float* x, float* y, uint32_t n) {
    // BEGIN SOLUTION saxpy
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = a * x[i] + y[i]; }
    // STUB
    // // Missing: write the kernel's body.
    // END SOLUTION
}

/** Runs saxpyKernel over the n elements of the device arrays, `block` threads per block. */
inline void saxpy(float a, const float* d_x, float* d_y, uint32_t n, uint32_t block) {
    const uint32_t blocks = (n + block - 1) / block;
    saxpyKernel<<<blocks, block>>>(a, d_x, d_y, n);
}
