// Task scan-multi: scanInc end to end (its first phase, scan1Block and scan3rdKernel).
#include "pbb_testing.cuh"

using kernellab::DeviceBuffer;

namespace {

template<class OP>
void checkScanInc(uint32_t n, uint32_t block, uint64_t seed) {
    if (!pbb::hostWrappersLaunch(block)) {
        pbb::notApplicable(pbb::hostWrappersCannotLaunch(block));
        return;
    }
    const auto input = pbb::Inputs<OP>::make(n, seed);
    DeviceBuffer<typename OP::InpElTp> d_in(input);
    DeviceBuffer<typename OP::RedElTp> d_out(n), d_tmp(pbb::maxBlock());
    kernellab::recordBytesToHost("scanInc", [&] { scanInc<kernellab::Stepped<OP>>(block, n, d_out.data(), d_in.data(), d_tmp.data()); });
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), [&] { return pbb::scanModel<OP>(pbb::mapAll<OP>(input)); }(),
                     pbb::Equals<OP>{}, kernellab::Layout{});
}

}  // namespace

TEMPLATE_TEST_CASE("scanInc scans arrays of any size with any block size", "[scan-multi]",
                   Add<int>, Add<float>, Max<int>, Mssp) {
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    const uint64_t seed  = 8000 + n;
    KL_CAPTURE(n, block, seed);
    checkScanInc<TestType>(n, block, seed);
}

TEMPLATE_TEST_CASE("scanInc stays correct when threads are delayed at random", "[scan-multi][random-delays]",
                   Jitter<Add<int>>, Jitter<Mssp>) {
    const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));
    const uint32_t n     = 300007;
    const uint64_t seed  = block;
    KL_CAPTURE(n, block, seed);
    checkScanInc<TestType>(n, block, seed);
}

TEST_CASE("scanInc scans the course's array size, past 2^26 elements", "[.large]") {
    const uint32_t n     = kernellab::largeSize(pbb::kCourseSize);
    const uint32_t block = GENERATE(256u, 1024u);
    const uint64_t seed  = 42;
    KL_CAPTURE(n, block, seed);
    checkScanInc<Add<int>>(n, block, seed);
}
