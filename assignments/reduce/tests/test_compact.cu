// Task compact (rung 2), and the given rung 1 it improves on, with the argument checks that every
// wrapper shares.
#include <stdexcept>
#include "reduce_testing.cuh"

#define REDUCE_OPERATORS Add<int32_t>, Add<float>, Max<int32_t>, Min<int32_t>

REDUCE_SEGMENT_RUNG_TESTS(reduceNeighbored, "[given]", block, REDUCE_OPERATORS)
REDUCE_SEGMENT_RUNG_TESTS(reduceCompact, "[compact]", block, REDUCE_OPERATORS, Jitter<Add<int32_t>>)

TEST_CASE("a wrapper rejects a bad block size, an empty array and a null pointer before launching", "[given]") {
    kernellab::DeviceBuffer<int32_t> d_in(8), d_out(1), d_scratch(reduceScratchElems(8));
    const uint32_t block = GENERATE(0u, 16u, 48u, 2048u);
    KL_CAPTURE(block);
    CHECK_THROWS_AS(reduceNeighbored<Add<int32_t>>(block, 8, d_out.data(), d_in.data(), d_scratch.data()),
                    std::invalid_argument);
    CHECK_THROWS_AS(reduceNeighbored<Add<int32_t>>(32, 0, d_out.data(), d_in.data(), d_scratch.data()),
                    std::invalid_argument);
    CHECK_THROWS_AS(reduceNeighbored<Add<int32_t>>(32, 8, d_out.data(), nullptr, d_scratch.data()),
                    std::invalid_argument);
}
