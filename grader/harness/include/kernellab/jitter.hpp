// Random pauses for device code under test: correctly synchronized code gives the same result
// under any delays, while a race between threads, which the GPU's usual timing hides, shows up
// as a wrong result. A test operator calls this before its work (e.g. in its `apply`).
#pragma once
#include <cstdint>

namespace kernellab {

/**
 * On the device, pauses about one call in eight for a few hundred nanoseconds; nothing on the host.
 * Built for a task whose manifest says warp_synchronous = "warn" (the build then defines
 * KERNELLAB_WARP_SYNCHRONOUS, to "warn" only), which accepts code relying on a warp's lanes running
 * in lockstep (the course's idiom): a pause then never splits a warp. Only a whole warp pauses, its
 * 32 lanes together, so races between warps still show and lockstep within one is kept.
 */
__device__ __host__ inline void jitterPause() {
#ifdef __CUDA_ARCH__
#ifdef KERNELLAB_WARP_SYNCHRONOUS
    constexpr unsigned kWholeWarp = 0xFFFFFFFFu;
    if (__activemask() != kWholeWarp) { return; }
    uint32_t h = (threadIdx.x / 32 + 1) * 0x9E3779B1u ^ (blockIdx.x + 1) * 0x85EBCA77u ^ uint32_t(clock64());
    h = __shfl_sync(kWholeWarp, h, 0);
#else
    uint32_t h = (threadIdx.x + 1) * 0x9E3779B1u ^ (blockIdx.x + 1) * 0x85EBCA77u ^ uint32_t(clock64());
#endif
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    if ((h & 7) == 0) { __nanosleep(256 + (h >> 20)); }
#endif
}

}  // namespace kernellab
