// Task warp-shuffle, graded on what it teaches: reductions in lg steps. The reductions run with
// `DepthSum`, whose elements carry the length of the longest chain of `apply` calls behind them:
// lane 0's result of warpReduceShuffle is 5 deep when the warp halves its active lanes in each of
// lg(WARP) steps, and 31 deep when lane 0 gathers the others one at a time (the stub); thread 0's
// result of blockReduceShuffle in a block of 1024 threads is 10 = lg(1024) deep when the first
// warp reduces the partials with shuffles too, and 5 + 31 when thread 0 combines them in turn.
#pragma once

#include <functional>
#include "reduce_testing.cuh"
#include "kernellab/instrumented.hpp"
#include "kernellab/property.hpp"

namespace warp_shuffle_properties {

using kernellab::Depth;
using kernellab::DepthMeasure;

/** Addition of ints that tracks each result's depth. */
struct DepthSum {
    typedef Depth Elem;
    static const bool commutative = false;
    static __device__ __host__ inline Depth identity() { return DepthMeasure::leaf(0); }
    static __device__ __host__ inline Depth apply(const Depth a, const Depth b) {
        return DepthMeasure::after(DepthMeasure::value(a) + DepthMeasure::value(b), a, b);
    }
};

/** Lane 0 of each warp writes the warp's reduction. */
__global__ void warpReduceDepthKernel(Depth* d_out, const Depth* d_in) {
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    const Depth value = warpReduceShuffle<DepthSum>(d_in[gid]);
    if (threadIdx.x % WARP == 0) { d_out[gid / WARP] = value; }
}

/** Thread 0 of each block writes the block's reduction. */
__global__ void blockReduceDepthKernel(Depth* d_out, const Depth* d_in) {
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    const Depth value = blockReduceShuffle<DepthSum>(d_in[gid], sharedElems<Depth>());
    if (threadIdx.x == 0) { d_out[blockIdx.x] = value; }
}

/** The values of `group`-element runs of `values`, reduced with `DepthSum` (inputs of depth 0). */
inline std::vector<int32_t> sumsOfRuns(const std::vector<int32_t>& values, uint32_t group) {
    std::vector<int32_t> sums(values.size() / group, 0);
    for (size_t i = 0; i < values.size(); i++) { sums[i / group] += values[i]; }
    return sums;
}

/** Reduces runs of `group` elements with `launch` and returns the deepest result, after checking the values. */
template<class Launch>
int64_t deepestOfRuns(uint32_t n, uint32_t group, uint64_t seed, Launch launch) {
    const auto values = kernellab::randomInts(n, seed, -9, 9);
    std::vector<Depth> input;
    for (const int32_t v : values) { input.push_back(DepthMeasure::leaf(v)); }
    kernellab::DeviceBuffer<Depth> d_in(input), d_out(n / group);
    launch(d_out.data(), d_in.data());
    KL_CHECK_LAUNCH();
    const auto results = d_out.download();
    std::vector<int32_t> got;
    int64_t deepest = 0;
    for (const Depth& r : results) {
        got.push_back(DepthMeasure::value(r));
        deepest = std::max<int64_t>(deepest, DepthMeasure::depth(r));
    }
    KL_REQUIRE_EQUAL(got, sumsOfRuns(values, group), std::equal_to<int32_t>{}, kernellab::Layout{});
    return deepest;
}

}  // namespace warp_shuffle_properties

TEST_CASE("warpReduceShuffle's result depends on a chain of lg(WARP) = 5 applications", "[warp-shuffle][property]") {
    using namespace warp_shuffle_properties;
    const uint32_t block = 256, blocks = 2, n = blocks * block;
    const uint64_t seed = 4600;
    KL_CAPTURE(block, n, seed);
    const int64_t depth = deepestOfRuns(n, WARP, seed, [&](Depth* d_out, const Depth* d_in) {
        warpReduceDepthKernel<<<blocks, block>>>(d_out, d_in);
    });
    kernellab::recordProperty("depth", "warpReduceShuffle", depth, kernellab::atMost(5));
}

TEST_CASE("blockReduceShuffle's result for 1024 threads depends on a chain of lg(1024) = 10 applications",
          "[warp-shuffle][property]") {
    using namespace warp_shuffle_properties;
    const uint32_t block = 1024, blocks = 2, n = blocks * block;
    const uint64_t seed = 4700;
    KL_CAPTURE(block, n, seed);
    const int64_t depth = deepestOfRuns(n, block, seed, [&](Depth* d_out, const Depth* d_in) {
        blockReduceDepthKernel<<<blocks, block, (block / WARP) * sizeof(Depth)>>>(d_out, d_in);
    });
    kernellab::recordProperty("depth", "blockReduceShuffle", depth, kernellab::atMost(10));
}
