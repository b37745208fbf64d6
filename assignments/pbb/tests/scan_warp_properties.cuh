// Task scan-warp, graded on what it teaches: a scan in lg(WARP) = 5 dependent steps. The scan
// runs with `DepthAdd`, whose elements carry the length of the longest chain of `apply` calls
// behind them and whose `apply` is counted per warp: the depth of a lane's result is 5 for the
// lg(WARP)-step scan and 31 for the course's stub (lane 0 alone); the applications, 129 per warp
// for the in-place scan, may not exceed one per lane and step (160).
#pragma once

#include <functional>
#include "pbb_testing.cuh"
#include "kernellab/instrumented.hpp"
#include "kernellab/property.hpp"

namespace scan_warp_properties {

using kernellab::Depth;
using kernellab::DepthMeasure;

/** Addition of ints that tracks each result's depth; the course's operator interface. */
class DepthAdd {
  public:
    typedef int32_t InpElTp;
    typedef Depth RedElTp;
    static const bool commutative = true;
    static __device__ __host__ inline int32_t identInp()                { return 0; }
    static __device__ __host__ inline Depth mapFun(const int32_t& el)   { return DepthMeasure::leaf(el); }
    static __device__ __host__ inline Depth identity()                  { return DepthMeasure::leaf(0); }
    static __device__ __host__ inline Depth apply(const Depth t1, const Depth t2) {
        return DepthMeasure::after(DepthMeasure::value(t1) + DepthMeasure::value(t2), t1, t2);
    }
    static __device__ __host__ inline bool equals(const Depth t1, const Depth t2) {
        return DepthMeasure::value(t1) == DepthMeasure::value(t2);
    }
    static __device__ __host__ inline Depth remVolatile(volatile Depth& t)       { Depth res(t); return res; }
};

/** Each warp scans its 32 elements; returns both the results and `ptr` afterwards. */
__global__ void scanIncWarpDepthKernel(Depth* d_returned, Depth* d_in_place, const Depth* d_in) {
    extern __shared__ char sh_mem[];
    volatile Depth* shmem = (Depth*)sh_mem;
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    shmem[threadIdx.x] = d_in[gid];
    __syncthreads();
    const Depth res = scanIncWarp<kernellab::Stepped<DepthAdd>>(shmem, threadIdx.x);
    __syncthreads();
    d_returned[gid] = res;
    d_in_place[gid] = DepthAdd::remVolatile(shmem[threadIdx.x]);
}

inline std::vector<int32_t> valuesOf(const std::vector<Depth>& elements) {
    std::vector<int32_t> out;
    for (const Depth& e : elements) { out.push_back(DepthMeasure::value(e)); }
    return out;
}

inline int64_t deepest(const std::vector<Depth>& elements) {
    int64_t most = 0;
    for (const Depth& e : elements) { most = std::max<int64_t>(most, DepthMeasure::depth(e)); }
    return most;
}

}  // namespace scan_warp_properties

TEST_CASE("scanIncWarp's results depend on chains of at most lg(WARP) = 5 applications", "[scan-warp][property]") {
    using namespace scan_warp_properties;
    const uint32_t block = GENERATE(32u, 1024u);
    const uint32_t n = 2 * block;
    const uint64_t seed = 4500 + block;
    KL_CAPTURE(block, n, seed);
    const auto values = kernellab::randomInts(n, seed, -9, 9);
    std::vector<Depth> input;
    for (const int32_t v : values) { input.push_back(DepthMeasure::leaf(v)); }
    kernellab::DeviceBuffer<Depth> d_in(input), d_returned(n), d_in_place(n);
    kernellab::ApplyCounter applies(n);
    scanIncWarpDepthKernel<<<n / block, block, block * sizeof(Depth)>>>(d_returned.data(), d_in_place.data(), d_in.data());
    KL_CHECK_LAUNCH();
    const auto returned = d_returned.download(), in_place = d_in_place.download();
    const auto expected = [&] {
        std::vector<int32_t> sums(n);
        for (uint32_t i = 0; i < n; i++) { sums[i] = values[i] + (i % WARP == 0 ? 0 : sums[i - 1]); }
        return sums;
    };
    const kernellab::Layout layout{block, block};
    KL_REQUIRE_EQUAL(valuesOf(returned), expected(), std::equal_to<int32_t>{}, layout);
    KL_REQUIRE_EQUAL(valuesOf(in_place), expected(), std::equal_to<int32_t>{}, layout);
    kernellab::recordProperty("depth", "scanIncWarp", std::max(deepest(returned), deepest(in_place)),
                              kernellab::atMost(5));
    kernellab::recordProperty("applies", "scanIncWarp", applies.mostOfOneWarp(), kernellab::atMost(5 * WARP));
}
