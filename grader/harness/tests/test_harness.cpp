// The harness's own tests: they need no GPU and run everywhere, CI included.
#include <algorithm>
#include "kernellab/catch.hpp"
#include "kernellab/compare.hpp"
#include "kernellab/inputs.hpp"

using namespace kernellab;

TEST_CASE("whereIs names the block, warp and lane that own an element", "[harness]") {
    CHECK(whereIs(0, Layout{256, 256}) == "block 0, warp 0, lane 0 (thread 0)");
    CHECK(whereIs(256 + 33, Layout{256, 256}) == "block 1, warp 1, lane 1 (thread 33)");
    // Three consecutive elements per thread, two passes per block of 64 threads.
    CHECK(whereIs(3 * 64 + 3 * 40 + 2, Layout{64, 2 * 3 * 64, 3}) == "block 0, warp 1, lane 8 (thread 40)");
    CHECK(whereIs(5, Layout{}) == "thread chosen by the host wrapper");
}

TEST_CASE("describeMismatch reports the first differing index, both values and the count", "[harness]") {
    const std::vector<int> host{1, 2, 3, 4, 5};
    CHECK(describeMismatch(host, host, std::equal_to<int>{}, Layout{32, 32}).empty());
    const std::vector<int> device{1, 2, 9, 4, 7};
    CHECK(describeMismatch(device, host, std::equal_to<int>{}, Layout{32, 32})
          == "first mismatch at index 2 (block 0, warp 0, lane 2 (thread 2)): device 9, host 3; 2 of 5 elements differ");
    CHECK(describeMismatch(std::vector<int>{1}, host, std::equal_to<int>{}, Layout{32, 32})
          == "device result has 1 elements, host model 5");
}

TEST_CASE("randomInts is reproducible from its seed and never all zero", "[harness]") {
    const size_t n = GENERATE(1u, 2u, 1000u);
    CAPTURE(n);
    CHECK(randomInts(n, 7, -3, 3) == randomInts(n, 7, -3, 3));
    for (uint64_t seed = 1; seed <= 100; seed++) {
        const auto values = randomInts(n, seed, -1, 1);
        CHECK(std::any_of(values.begin(), values.end(), [](int v) { return v != 0; }));
    }
}

TEST_CASE("hostileSizes covers the boundaries of warps, blocks and powers of two", "[harness]") {
    const auto sizes = hostileSizes();
    for (uint32_t n : {1u, 31u, 32u, 33u, 1023u, 1024u, 1025u, 8191u, 8193u, 1000003u}) {
        CAPTURE(n);
        CHECK(std::find(sizes.begin(), sizes.end(), n) != sizes.end());
    }
}

TEST_CASE("randomFlags sets about one flag per mean segment length", "[harness]") {
    const auto flags = randomFlags(100000, 3, 10);
    const auto set = std::count(flags.begin(), flags.end(), 1);
    CHECK(set > 9000);
    CHECK(set < 11000);
}
