// Task copy, graded on what it teaches: coalescing. The copies run on `Traced` elements, whose
// every copy reports which element of the traced global array a thread read or wrote, so the
// test counts the 32-byte sectors that one warp instruction's 32 lanes touch (4 when they move
// 32 consecutive 4-byte elements; the course's stub, each thread copying its own run of CHUNK
// elements, touches up to 32) and how often each element was read or written (exactly once).
#pragma once

#include <functional>
#include "pbb_testing.cuh"
#include "kernellab/instrumented.hpp"
#include "kernellab/property.hpp"

namespace copy_properties {

using kernellab::Traced;

/** Copies tiles of the traced `d_in` in with the student's function, then out, thread by thread, as ints. */
template<uint32_t CHUNK>
__global__ void glb2ShrTracedKernel(int32_t* d_out, Traced* d_in, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile Traced* tile = (Traced*)sh_mem;
    const uint32_t offs = blockIdx.x * blockDim.x * CHUNK;
    copyFromGlb2ShrMem<Traced, CHUNK>(offs, N, Traced(0), d_in, tile);
    for (uint32_t i = 0; i < CHUNK; i++) {
        d_out[offs + threadIdx.x * CHUNK + i] = tile[threadIdx.x * CHUNK + i].value;
    }
}

/** Fills tiles thread by thread from ints, then copies them out to the traced `d_out` with the student's function. */
template<uint32_t CHUNK>
__global__ void shr2GlbTracedKernel(Traced* d_out, const int32_t* d_in, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile Traced* tile = (Traced*)sh_mem;
    const uint32_t offs = blockIdx.x * blockDim.x * CHUNK;
    for (uint32_t i = 0; i < CHUNK; i++) {
        const uint32_t loc = threadIdx.x * CHUNK + i;
        tile[loc] = Traced(d_in[offs + loc]);
    }
    __syncthreads();
    copyFromShr2GlbMem<Traced, CHUNK>(offs, N, d_out, tile);
}

/** Whole tiles of three blocks, so that every warp instruction of a coalesced copy has 32 lanes. */
constexpr uint32_t kBlocks = 3;

inline std::vector<Traced> traced(const std::vector<int32_t>& values) {
    std::vector<Traced> out;
    out.reserve(values.size());
    for (const int32_t v : values) { out.emplace_back(v); }
    return out;
}

inline std::vector<int32_t> valuesOf(const std::vector<Traced>& elements) {
    std::vector<int32_t> out;
    out.reserve(elements.size());
    for (const Traced& e : elements) { out.push_back(e.value); }
    return out;
}

template<uint32_t CHUNK>
void measureGlb2Shr(uint32_t block, uint64_t seed) {
    const uint32_t per_thread = CHUNK;
    const uint32_t n = kBlocks * block * CHUNK;
    KL_CAPTURE(block, per_thread, n, seed);
    const auto values = kernellab::randomInts(n, seed, -1000000, 1000000);
    kernellab::DeviceBuffer<Traced> d_in(traced(values));
    kernellab::DeviceBuffer<int32_t> d_out(n);
    kernellab::AccessTrace trace(d_in.data(), n, kBlocks * block, CHUNK);
    glb2ShrTracedKernel<CHUNK><<<kBlocks, block, size_t(block) * CHUNK * sizeof(Traced)>>>(d_out.data(), d_in.data(), n);
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), values, std::equal_to<int32_t>{},
                     (kernellab::Layout{block, uint64_t(block) * CHUNK, CHUNK}));
    kernellab::recordProperty("reads", "copyFromGlb2ShrMem", trace.readsOfEach(), kernellab::exactly(1));
    kernellab::recordProperty("sectors", "copyFromGlb2ShrMem", trace.mostSectorsOfOneWarpAccess(), kernellab::atMost(4));
}

template<uint32_t CHUNK>
void measureShr2Glb(uint32_t block, uint64_t seed) {
    const uint32_t per_thread = CHUNK;
    const uint32_t n = kBlocks * block * CHUNK;
    KL_CAPTURE(block, per_thread, n, seed);
    const auto values = kernellab::randomInts(n, seed, -1000000, 1000000);
    kernellab::DeviceBuffer<int32_t> d_in(values);
    kernellab::DeviceBuffer<Traced> d_out(n);
    kernellab::AccessTrace trace(d_out.data(), n, kBlocks * block, CHUNK);
    shr2GlbTracedKernel<CHUNK><<<kBlocks, block, size_t(block) * CHUNK * sizeof(Traced)>>>(d_out.data(), d_in.data(), n);
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(valuesOf(d_out.download()), values, std::equal_to<int32_t>{},
                     (kernellab::Layout{block, uint64_t(block) * CHUNK, CHUNK}));
    kernellab::recordProperty("writes", "copyFromShr2GlbMem", trace.writesOfEach(), kernellab::exactly(1));
    kernellab::recordProperty("sectors", "copyFromShr2GlbMem", trace.mostSectorsOfOneWarpAccess(), kernellab::atMost(4));
}

}  // namespace copy_properties

TEST_CASE("copyFromGlb2ShrMem reads each element once, a warp's 32 lanes 32 consecutive ones at a time", "[copy][property]") {
    const uint32_t block = GENERATE(32u, 256u);
    SECTION("7 per thread")  { copy_properties::measureGlb2Shr<7>(block, 4100 + block); }
    SECTION("23 per thread") { copy_properties::measureGlb2Shr<23>(block, 4200 + block); }
}

TEST_CASE("copyFromShr2GlbMem writes each element once, a warp's 32 lanes 32 consecutive ones at a time", "[copy][property]") {
    const uint32_t block = GENERATE(32u, 256u);
    SECTION("7 per thread")  { copy_properties::measureShr2Glb<7>(block, 4300 + block); }
    SECTION("23 per thread") { copy_properties::measureShr2Glb<23>(block, 4400 + block); }
}
