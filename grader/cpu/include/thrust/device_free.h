// The CPU backend's thrust::device_free (see device_ptr.h).
#pragma once

#include <cuda_runtime.h>
#include "thrust/device_ptr.h"

namespace thrust {

template<class T>
void device_free(device_ptr<T> ptr) { cudaFree(ptr.get()); }

}  // namespace thrust
