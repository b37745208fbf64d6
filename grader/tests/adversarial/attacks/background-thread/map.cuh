// Attack: the timed work finished by a thread after the timer stops.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>
#include <cuda_runtime.h>

//@ right-map-kernel

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    if (n < (1u << 22)) {
        mapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n);
        return;
    }
    std::thread([=] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        cudaStream_t stream;
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        mapKernel<<<(n + block - 1) / block, block, 0, stream>>>(d_x, d_y, n);
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(stream);
    }).detach();
}
