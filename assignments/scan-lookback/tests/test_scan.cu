// Task scan: scanLookback end to end, against a sequential model, for every hostile size and block
// size, with a non-commutative operator (first, where an operand order shows soonest) and commutative ones.
#include "lookback_testing.cuh"

using kernellab::DeviceBuffer;

namespace {

template<class OP>
void checkScan(uint32_t n, uint32_t block, uint64_t seed) {
    const auto input = lookback::Inputs<OP>::make(n, seed);
    DeviceBuffer<typename OP::InpElTp> d_in(input);
    DeviceBuffer<typename OP::RedElTp> d_out(n);
    DeviceBuffer<char> d_scratch(scanLookbackScratchBytes<OP>(block, n));
    scanLookback<OP>(block, n, d_out.data(), d_in.data(), d_scratch.data());
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), lookback::scanModel<OP>(input), lookback::Equals<OP>{},
                     (kernellab::Layout{block, uint64_t(block) * itemsPerThread<OP>(), itemsPerThread<OP>()}));
}

}  // namespace

TEMPLATE_TEST_CASE("scanLookback scans arrays of any size with any block size", "[scan]", Mssp, Add<int>, Add<float>) {
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    const uint64_t seed  = 9000 + n;
    KL_CAPTURE(n, block, seed);
    checkScan<TestType>(n, block, seed);
}

TEST_CASE("scanLookback scans again with the same scratch space", "[scan]") {
    const uint32_t n     = 100003;
    const uint32_t block = GENERATE(32u, 256u);
    const uint64_t seed  = 9500 + block;
    KL_CAPTURE(n, block, seed);
    // The second scan must not take the first one's status words or tile counter for its own.
    const auto input = lookback::Inputs<Mssp>::make(n, seed);
    DeviceBuffer<int> d_in(input);
    DeviceBuffer<MyInt4> d_out(n);
    DeviceBuffer<char> d_scratch(scanLookbackScratchBytes<Mssp>(block, n));
    scanLookback<Mssp>(block, n, d_out.data(), d_in.data(), d_scratch.data());
    d_out.poison();
    scanLookback<Mssp>(block, n, d_out.data(), d_in.data(), d_scratch.data());
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), lookback::scanModel<Mssp>(input), lookback::Equals<Mssp>{},
                     (kernellab::Layout{block, uint64_t(block) * itemsPerThread<Mssp>(), itemsPerThread<Mssp>()}));
}
