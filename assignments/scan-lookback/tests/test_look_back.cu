// Task look-back: lookBack folds the predecessors' status into the tile's exclusive prefix, over
// status words set by the test: runs of aggregates longer than a window, prefixes here and there,
// and tiles that are not the block's index.
#include <algorithm>
#include <random>

#include "lookback_testing.cuh"

using kernellab::DeviceBuffer;

namespace {

/** Block b looks back from tile d_tiles[b] with its first warp; lane 0's result goes to d_out[b]. */
template<class OP>
__global__ void lookBackFrom(TileStatus<OP> status, const uint32_t* d_tiles, typename OP::RedElTp* d_out) {
    extern __shared__ uint4 shmem[];
    volatile typename OP::RedElTp* window = reinterpret_cast<volatile typename OP::RedElTp*>(shmem);
    if (threadIdx.x >= WARP) { return; }
    const typename OP::RedElTp exclusive = lookBack<OP>(status, d_tiles[blockIdx.x], window);
    if (threadIdx.x == 0) { d_out[blockIdx.x] = exclusive; }
}

/** The status of `tiles` tiles that have all published: aggregates, prefixes, and a flag each. */
template<class OP>
struct PublishedTiles {
    std::vector<uint32_t> flags;
    std::vector<typename OP::RedElTp> aggregates, prefixes;
};

/**
 * Each tile's aggregate reduces 5 random inputs (an Mssp state with all four fields different);
 * a tile shows its prefix with probability 1/`prefix_odds`, its aggregate otherwise, so that the
 * look-back crosses several windows of 32 before it meets a prefix.
 */
template<class OP>
PublishedTiles<OP> publishedTiles(uint32_t tiles, uint32_t prefix_odds, uint64_t seed) {
    const auto inputs = lookback::Inputs<OP>::make(5 * size_t(tiles), seed);
    const auto odds = kernellab::randomInts(tiles, seed + 1, 0, int(prefix_odds) - 1);
    PublishedTiles<OP> published;
    typename OP::RedElTp prefix = OP::identity();
    for (uint32_t t = 0; t < tiles; t++) {
        typename OP::RedElTp aggregate = OP::identity();
        for (uint32_t i = 0; i < 5; i++) { aggregate = OP::apply(aggregate, OP::mapFun(inputs[5 * t + i])); }
        prefix = OP::apply(prefix, aggregate);
        published.aggregates.push_back(aggregate);
        published.prefixes.push_back(prefix);
        published.flags.push_back(odds[t] == 0 ? STATUS_PREFIX : STATUS_AGGREGATE);
    }
    return published;
}

template<class OP>
void checkLookBack(uint32_t tiles, uint32_t prefix_odds, uint32_t block, uint64_t seed) {
    const auto published = publishedTiles<OP>(tiles, prefix_odds, seed);
    // Queries: every tile from 1 up, shuffled, so that no block looks back from its own index.
    std::vector<uint32_t> queries(tiles - 1);
    for (uint32_t t = 1; t < tiles; t++) { queries[t - 1] = t; }
    std::shuffle(queries.begin(), queries.end(), std::mt19937_64(seed));

    lookback::DeviceStatus<OP> status(tiles);
    status.flags.upload(published.flags);
    status.aggregates.upload(published.aggregates);
    // A prefix is there only where the flag announces it: the others stay poisoned.
    std::vector<typename OP::RedElTp> prefixes = status.prefixes.download();
    for (uint32_t t = 0; t < tiles; t++) {
        if (published.flags[t] == STATUS_PREFIX) { prefixes[t] = published.prefixes[t]; }
    }
    status.prefixes.upload(prefixes);
    DeviceBuffer<uint32_t> d_tiles(queries);
    DeviceBuffer<typename OP::RedElTp> d_out(queries.size());
    lookBackFrom<OP><<<uint32_t(queries.size()), block, WARP * sizeof(typename OP::RedElTp)>>>(
        status.view(), d_tiles.data(), d_out.data());
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), [&] {
        std::vector<typename OP::RedElTp> expected;
        for (uint32_t tile : queries) { expected.push_back(published.prefixes[tile - 1]); }
        return expected;
    }(), lookback::Equals<OP>{}, kernellab::Layout{});
}

}  // namespace

TEMPLATE_TEST_CASE("lookBack folds aggregates back to the nearest prefix, in tile order", "[look-back]",
                   Mssp, Add<int>, Add<float>) {
    const uint32_t tiles       = GENERATE(2u, 33u, 200u);
    const uint32_t prefix_odds = GENERATE(1u, 3u, 40u);
    const uint32_t block       = GENERATE(32u, 1024u);
    const uint64_t seed        = 6000 + tiles * 7 + prefix_odds;
    KL_CAPTURE(tiles, prefix_odds, block, seed);
    checkLookBack<TestType>(tiles, prefix_odds, block, seed);
}

TEMPLATE_TEST_CASE("lookBack reaches tile 0 when no tile before it shows a prefix", "[look-back]", Add<int>, Mssp) {
    const uint32_t tiles = GENERATE(2u, 32u, 33u, 65u, 100u);
    const uint64_t seed  = 6500 + tiles;
    KL_CAPTURE(tiles, seed);
    // Odds beyond any draw: every tile shows only its aggregate.
    checkLookBack<TestType>(tiles, 1u << 30, 32, seed);
}
