// Attack: the timed work moved to another stream, out of the default stream's events.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

//@ right-map-kernel

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    if (n < (1u << 22)) {
        mapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n);
        return;
    }
    static cudaStream_t hidden = [] {
        cudaStream_t stream;
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        return stream;
    }();
    mapKernel<<<(n + block - 1) / block, block, 0, hidden>>>(d_x, d_y, n);
}
