// Task ordered, graded on what it teaches: coalesced loads of ordered chunks. The kernel runs on
// `Traced` elements, whose every copy reports which element of the traced input a thread read,
// so the test counts the 32-byte sectors that one warp instruction's 32 lanes touch (4 when the
// block stages the tile with 32 consecutive 4-byte elements per warp load; the stub, each thread
// reading its own chunk straight from global memory, touches about 28 with chunks of 7) and how
// often each element was read (exactly once).
#pragma once

#include <functional>
#include "reduce_testing.cuh"
#include "kernellab/instrumented.hpp"
#include "kernellab/property.hpp"

namespace ordered_properties {

using kernellab::Traced;

/** Addition of ints on traced elements. */
struct TracedSum {
    typedef Traced Elem;
    static const bool commutative = false;
    static __device__ __host__ inline Traced identity() { return Traced(0); }
    static __device__ __host__ inline Traced apply(const Traced a, const Traced b) { return Traced(a.value + b.value); }
};

}  // namespace ordered_properties

TEST_CASE("reduceOrderedKernel reads each element once, a warp's 32 lanes 32 consecutive ones at a time", "[ordered][property]") {
    using ordered_properties::TracedSum;
    using kernellab::Traced;
    // Chunks of 7 (what reduceOrdered takes for 4-byte elements), two whole tiles per block.
    const uint32_t block = 256, blocks = 2, chunk = 7, tiles_per_block = 2;
    const uint32_t per_block = tiles_per_block * chunk * block, n = blocks * per_block;
    const uint64_t seed = 4800;
    KL_CAPTURE(block, chunk, n, seed);
    const auto values = kernellab::randomInts(n, seed, -9, 9);
    std::vector<Traced> input;
    for (const int32_t v : values) { input.emplace_back(v); }
    kernellab::DeviceBuffer<Traced> d_in(input), d_partials(blocks);
    kernellab::AccessTrace trace(d_in.data(), n, blocks * block, chunk * tiles_per_block);
    reduceOrderedKernel<TracedSum><<<blocks, block, (chunk * block + block / WARP) * sizeof(Traced)>>>(
        d_partials.data(), d_in.data(), n, chunk, tiles_per_block);
    KL_CHECK_LAUNCH();
    std::vector<int32_t> got;
    for (const Traced& partial : d_partials.download()) { got.push_back(partial.value); }
    const auto expected = [&] {
        std::vector<int32_t> sums(blocks, 0);
        for (uint32_t i = 0; i < n; i++) { sums[i / per_block] += values[i]; }
        return sums;
    };
    KL_REQUIRE_EQUAL(got, expected(), std::equal_to<int32_t>{}, kernellab::Layout{});
    kernellab::recordProperty("reads", "reduceOrderedKernel", trace.readsOfEach(), kernellab::exactly(1));
    kernellab::recordProperty("sectors", "reduceOrderedKernel", trace.mostSectorsOfOneWarpAccess(), kernellab::atMost(4));
}
