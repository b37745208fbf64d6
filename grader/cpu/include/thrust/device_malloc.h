// The CPU backend's thrust::device_malloc (see device_ptr.h): n elements of device memory.
#pragma once

#include <cuda_runtime.h>
#include "thrust/device_ptr.h"

namespace thrust {

template<class T>
device_ptr<T> device_malloc(std::size_t n) {
    void* raw = nullptr;
    cudaMalloc(&raw, n * sizeof(T));
    return device_ptr<T>(static_cast<T*>(raw));
}

}  // namespace thrust
