// A device array that owns its memory and starts poisoned, so an element the code under
// test never writes shows up as a mismatch instead of passing by luck.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "kernellab/cuda_check.hpp"

namespace kernellab {

/** The byte every fresh or re-poisoned buffer is filled with. */
constexpr unsigned char kPoisonByte = 0xA5;

/** The value of type T whose bytes are all the poison byte. */
template<class T>
T poisonValue() {
    T value;
    std::memset(static_cast<void*>(&value), kPoisonByte, sizeof(T));
    return value;
}

template<class T>
class DeviceBuffer {
  public:
    explicit DeviceBuffer(size_t size) : size_(size) {
        KL_CUDA(cudaMalloc(&data_, bytes()));
        poison();
    }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
    ~DeviceBuffer() { cudaFree(data_); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* data() const { return data_; }
    size_t size() const { return size_; }

    void poison() { KL_CUDA(cudaMemset(data_, kPoisonByte, bytes())); }

    void upload(const std::vector<T>& host) {
        if (host.size() != size_) { throw std::invalid_argument("DeviceBuffer::upload: size mismatch"); }
        KL_CUDA(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
    }

    std::vector<T> download() const {
        std::vector<T> host(size_);
        KL_CUDA(cudaMemcpy(static_cast<void*>(host.data()), data_, bytes(), cudaMemcpyDeviceToHost));
        return host;
    }

  private:
    size_t bytes() const { return (size_ > 0 ? size_ : 1) * sizeof(T); }

    T* data_ = nullptr;
    size_t size_;
};

}  // namespace kernellab
