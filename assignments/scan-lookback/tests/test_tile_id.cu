// Task tile-id: acquireTile hands out consecutive tiles from the counter, one per block, the same
// to every thread of the block, in whatever order the blocks start.
#include "lookback_testing.cuh"

using kernellab::DeviceBuffer;

namespace {

/** Every thread takes its block's tile and counts itself under it; a tile outside the range is a stray. */
__global__ void takeTiles(uint32_t* d_counter, uint32_t first, uint32_t* d_threads_of, uint32_t* d_strays) {
    const uint32_t tile = acquireTile(d_counter);
    const uint32_t index = tile - first;
    if (index >= gridDim.x) {
        atomicAdd(d_strays, 1u);
        return;
    }
    atomicAdd(&d_threads_of[index], 1u);
}

}  // namespace

TEST_CASE("acquireTile gives each block its own tile from the counter, the same to all its threads", "[tile-id]") {
    const uint32_t blocks = GENERATE(1u, 2u, 31u, 33u, 257u);
    const uint32_t block  = GENERATE(from_range(kernellab::blockSizes()));
    const uint64_t seed   = 4000 + blocks;
    // The counter starts where an earlier scan left it: tile ids are the counter's, not blockIdx.x.
    const uint32_t first  = 1000 + uint32_t(kernellab::randomInts(1, seed, 0, 1000)[0]);
    KL_CAPTURE(blocks, block, seed, first);

    DeviceBuffer<uint32_t> d_counter(std::vector<uint32_t>{first});
    DeviceBuffer<uint32_t> d_threads_of(std::vector<uint32_t>(blocks, 0));
    DeviceBuffer<uint32_t> d_strays(std::vector<uint32_t>{0});
    takeTiles<<<blocks, block>>>(d_counter.data(), first, d_threads_of.data(), d_strays.data());
    KL_CHECK_LAUNCH();
    // Each tile once, taken by all the threads of one block; no thread outside the range.
    KL_REQUIRE_EQUAL(d_threads_of.download(), std::vector<uint32_t>(blocks, block), std::equal_to<uint32_t>{},
                     kernellab::Layout{});
    KL_REQUIRE_EQUAL(d_strays.download(), std::vector<uint32_t>{0}, std::equal_to<uint32_t>{}, kernellab::Layout{});
    KL_REQUIRE_EQUAL(d_counter.download(), std::vector<uint32_t>{first + blocks}, std::equal_to<uint32_t>{},
                     kernellab::Layout{});
}
