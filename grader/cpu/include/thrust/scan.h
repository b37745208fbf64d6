// The CPU backend's thrust::exclusive_scan and inclusive_scan over device_ptr ranges (see
// device_ptr.h), sequential: device memory is host memory here.
#pragma once

#include "thrust/device_ptr.h"

namespace thrust {

template<class T>
device_ptr<T> exclusive_scan(device_ptr<T> first, device_ptr<T> last, device_ptr<T> result) {
    T sum{};
    for (std::ptrdiff_t i = 0; i < last - first; i++) {
        const T element = first[i];
        result[i] = sum;
        sum = sum + element;
    }
    return result + (last - first);
}

template<class T>
device_ptr<T> inclusive_scan(device_ptr<T> first, device_ptr<T> last, device_ptr<T> result) {
    T sum{};
    for (std::ptrdiff_t i = 0; i < last - first; i++) {
        sum = sum + first[i];
        result[i] = sum;
    }
    return result + (last - first);
}

}  // namespace thrust
