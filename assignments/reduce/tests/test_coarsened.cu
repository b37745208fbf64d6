// Task coarsened (rung 7): one launch, any size, block size and alignment of the input.
#include "reduce_testing.cuh"

TEMPLATE_TEST_CASE("reduceCoarsened reduces every size with every block size", "[coarsened]", Add<int32_t>,
                   Add<float>, Max<int32_t>, Min<int32_t>) {
    typedef TestType OP;
    const uint32_t n = GENERATE(from_range(kernellab::hostileSizes()));
    const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));
    const uint64_t seed = 300 + n;
    KL_CAPTURE(n, block, seed);
    reduce_test::checkExact<OP>("reduceCoarsened", reduceCoarsened<OP>, n, block, seed);
}

TEST_CASE("reduceCoarsened reduces an input that does not start on a 16-byte boundary", "[coarsened]") {
    const uint32_t n = GENERATE(1u, 33u, 1025u, (1u << 17) + 1, 1000003u);
    const size_t offset = GENERATE(1u, 2u, 3u);
    const uint32_t block = GENERATE(32u, 256u, 1024u);
    const uint64_t seed = 400 + n;
    KL_CAPTURE(n, offset, block, seed);
    reduce_test::checkExact<Add<int32_t>>("reduceCoarsened", reduceCoarsened<Add<int32_t>>, n, block, seed, offset);
}

TEST_CASE("reduceCoarsened sums random floats within the error bound of its summation", "[coarsened]") {
    const uint32_t n = GENERATE(from_range(kernellab::hostileSizes()));
    const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));
    const float lo = GENERATE(-1.0f, 0.5f);
    const uint64_t seed = 500 + n;
    // A thread adds its elements one after another: 4 per Vec4, COARSE_FACTOR Vec4s of each tile
    // its block takes, the Vec4s after the last whole tile, and one element of the scalar tail;
    // the block tree adds lg(block) levels; then the last block adds the partials, up to
    // ceil(blocks / block) per thread, and its tree lg(block) levels again.
    const uint64_t blocks = reduceCoarsenedBlocks(n, block), log_block = reduce_test::log2Of(block);
    const uint64_t tile = uint64_t(COARSE_FACTOR) * block, whole_tiles = (n / 4) / tile;
    const uint64_t rest_vec4s = n / 4 - whole_tiles * tile;
    const uint64_t per_thread = 4 * (COARSE_FACTOR * ((whole_tiles + blocks - 1) / blocks)
                                     + (rest_vec4s + blocks * block - 1) / (blocks * block)) + 1;
    const uint64_t height = per_thread + log_block + (blocks + block - 1) / block + log_block;
    KL_CAPTURE(n, block, lo, seed, blocks, height);
    reduce_test::checkFloatSum("reduceCoarsened", reduceCoarsened<Add<float>>, n, block, seed, height, lo, 1.0f);
}
