// Attack: the CUDA runtime's event timer replaced.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
    *ms = 0.001f;
    return cudaSuccess;
}

//@ right-map
