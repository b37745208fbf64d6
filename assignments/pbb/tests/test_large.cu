// The course's own size, 100003565 elements: more blocks than one block can scan unless the
// wrappers sequentialize, and indexes past 2^26. Hidden ([.large]); CTest `pbb.large` runs it.
// The work stays on the device at this size too (bytes-to-host), where no graded size reaches.
#include "pbb_testing.cuh"

using kernellab::DeviceBuffer;

namespace {
constexpr uint32_t kCourseSize = 100003565;
}

TEST_CASE("mapReduce and scanInc handle the course's 100003565 elements", "[.large]") {
    typedef Add<int> OP;
    const uint32_t block = GENERATE(256u, 1024u);
    KL_CAPTURE(block);
    if (!pbb::hostWrappersLaunch(block)) {
        pbb::notApplicable(pbb::hostWrappersCannotLaunch(block));
        return;
    }
    const auto input = pbb::Inputs<OP>::make(kCourseSize, 42);
    DeviceBuffer<int> d_in(input), d_out(kCourseSize), d_tmp(pbb::maxBlock());

    kernellab::recordBytesToHost("mapReduce", [&] { mapReduce<OP>(block, kCourseSize, d_tmp.data(), d_in.data()); });
    KL_CHECK_LAUNCH();
    const std::vector<int> sum{d_tmp.download()[0]};
    KL_REQUIRE_EQUAL(sum, std::vector<int>{pbb::reduceModel<OP>(input)}, pbb::Equals<OP>{}, kernellab::Layout{});

    kernellab::recordBytesToHost("scanInc", [&] { scanInc<OP>(block, kCourseSize, d_out.data(), d_in.data(), d_tmp.data()); });
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), pbb::scanModel<OP>(input), pbb::Equals<OP>{}, kernellab::Layout{});
}

TEST_CASE("sgmScanInc handles the course's 100003565 elements", "[.large]") {
    typedef Add<int> OP;
    const uint32_t block = 256;
    KL_CAPTURE(block);
    if (!pbb::hostWrappersLaunch(block)) {
        pbb::notApplicable(pbb::hostWrappersCannotLaunch(block));
        return;
    }
    const auto input = pbb::Inputs<OP>::make(kCourseSize, 43);
    const auto flags = kernellab::randomFlags(kCourseSize, 43, 1000);
    DeviceBuffer<int> d_in(input), d_out(kCourseSize), d_tmp_vals(pbb::maxBlock());
    DeviceBuffer<char> d_flags(flags), d_tmp_flags(pbb::maxBlock());
    kernellab::recordBytesToHost("sgmScanInc", [&] {
        sgmScanInc<OP>(block, kCourseSize, d_out.data(), d_flags.data(), d_in.data(), d_tmp_vals.data(), d_tmp_flags.data());
    });
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), pbb::valuesOf(pbb::sgmScanModel<OP>(input, flags)), pbb::Equals<OP>{},
                     kernellab::Layout{});
}
