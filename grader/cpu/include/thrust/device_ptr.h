// The CPU backend's Thrust: only what course starter code that times Thrust (given code, never
// the student's: an assignment forbids Thrust for the student's code) uses, so that it builds.
// Device memory is host memory here, so the algorithms run sequentially on the calling thread.
#pragma once

#include <cstddef>

namespace thrust {

/** A pointer to device memory, as Thrust's: arithmetic, `get()` and element access. */
template<class T>
class device_ptr {
  public:
    device_ptr() = default;
    explicit device_ptr(T* raw) : raw_(raw) {}
    T* get() const { return raw_; }
    T& operator*() const { return *raw_; }
    T& operator[](std::ptrdiff_t i) const { return raw_[i]; }
    device_ptr operator+(std::ptrdiff_t n) const { return device_ptr(raw_ + n); }
    std::ptrdiff_t operator-(const device_ptr& other) const { return raw_ - other.raw_; }

  private:
    T* raw_ = nullptr;
};

template<class T>
device_ptr<T> device_pointer_cast(T* raw) { return device_ptr<T>(raw); }

}  // namespace thrust
