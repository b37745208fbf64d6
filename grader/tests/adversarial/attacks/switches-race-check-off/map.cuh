// Attack: a warp-synchronous race, and the CPU backend's race check switched off from inside.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cuda_runtime.h>

/** y = 3x - 7, through shared memory; each lane but a warp's last also reads its right neighbour's
 *  value as it was before the neighbour overwrites it. */
__global__ void mapKernel(const int32_t* x, int32_t* y, uint32_t n) {
    extern __shared__ int32_t tile[];
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0;
    __syncthreads();
    const uint32_t neighbour = (threadIdx.x & 31u) == 31u || threadIdx.x + 1 == blockDim.x ? threadIdx.x : threadIdx.x + 1;
    const int32_t before = i - threadIdx.x + neighbour < n ? x[i - threadIdx.x + neighbour] : 0;
    const int32_t seen = tile[neighbour];
    tile[threadIdx.x] = 3 * tile[threadIdx.x] - 7;
    // Zero when the neighbour's value was read before the neighbour overwrote it.
    if (i < n) { y[i] = tile[threadIdx.x] + (seen - before); }
}

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    mapKernel<<<(n + block - 1) / block, block, block * sizeof(int32_t)>>>(d_x, d_y, n);
}

namespace {
const int switched = setenv("KERNELLAB_CPU_ORDERS", "1", 1);
}  // namespace
