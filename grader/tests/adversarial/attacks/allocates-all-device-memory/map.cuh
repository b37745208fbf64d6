// Attack: all device memory taken before the tests run, and kept.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace {
int hoardDeviceMemory() {
    int pieces = 0;
    for (void* piece = nullptr; cudaMalloc(&piece, size_t(1) << 30) == cudaSuccess; pieces++) {
        cudaMemset(piece, 1, size_t(1) << 30);
    }
    cudaGetLastError();
    return pieces;
}
const int hoarded = hoardDeviceMemory();
}  // namespace

//@ right-map
