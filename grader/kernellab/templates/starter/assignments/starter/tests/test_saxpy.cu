// Task saxpy: saxpyKernel against a sequential host model, on every hostile size and block size.
#include <vector>

#include "kernellab_solution.h"  // generated: the solution's entry file under its own name
#include "kernellab/catch.hpp"
#include "kernellab/compare.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"

using kernellab::DeviceBuffer;

namespace {

/** Random small integers as floats: every sum and product the test makes of them is exact. */
std::vector<float> smallIntegerFloats(size_t n, uint64_t seed) {
    const auto ints = kernellab::randomInts(n, seed, -1000, 1000);
    return std::vector<float>(ints.begin(), ints.end());
}

}  // namespace

TEST_CASE("saxpy sets y to a * x + y for every element and writes nothing past the end", "[saxpy]") {
    const uint32_t n     = GENERATE(from_range(kernellab::hostileSizes()));
    const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));
    const uint64_t seed  = 7000 + n;
    KL_CAPTURE(n, block, seed);

    // Small integers: every result is exact in float, so the comparison can be exact too.
    const float a = 3.0f;
    const auto x = smallIntegerFloats(n, seed);
    auto y = smallIntegerFloats(n, seed + 1);
    std::vector<float> expected(n);
    for (uint32_t i = 0; i < n; i++) { expected[i] = a * x[i] + y[i]; }
    // One poisoned block after the end of y: a thread past n that writes shows up there.
    const std::vector<float> tail(block, kernellab::poisonValue<float>());
    y.insert(y.end(), tail.begin(), tail.end());
    expected.insert(expected.end(), tail.begin(), tail.end());

    DeviceBuffer<float> d_x(x), d_y(y);
    saxpy(a, d_x.data(), d_y.data(), n, block);
    KL_CHECK_LAUNCH();
    const auto equal = [](float device, float host) { return device == host; };
    KL_REQUIRE_EQUAL(d_y.download(), expected, equal, (kernellab::Layout{block, block}));
}
