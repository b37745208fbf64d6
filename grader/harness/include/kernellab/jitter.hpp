// Random pauses for device code under test: correctly synchronized code gives the same result
// under any delays, while a race between threads, which the GPU's usual timing hides, shows up
// as a wrong result. A test operator calls this before its work (e.g. in its `apply`).
#pragma once
#include <cstdint>

namespace kernellab {

/** On the device, pauses about one call in eight for a few hundred nanoseconds; nothing on the host. */
__device__ __host__ inline void jitterPause() {
#ifdef __CUDA_ARCH__
    uint32_t h = (threadIdx.x + 1) * 0x9E3779B1u ^ (blockIdx.x + 1) * 0x85EBCA77u ^ uint32_t(clock64());
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    if ((h & 7) == 0) { __nanosleep(256 + (h >> 20)); }
#endif
}

}  // namespace kernellab
