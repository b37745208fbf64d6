// Task exclusive-scan: exclusive_scan on the arrays cudaScan gives it, against the sequential scan.
#include "cs149_testing.cuh"

namespace {

/**
 * Runs exclusive_scan as cudaScan does (both arrays nextPow2(n) long, `result` a copy of the
 * input) and checks the first n results and that nothing past the rounded buffers was written.
 * Elements n .. nextPow2(n) are the scan's to use: the course promises nothing about them.
 */
void checkExclusiveScan(const std::vector<int>& input) {
    const uint32_t n = uint32_t(input.size());
    kernellab::DeviceBuffer<int> d_input(cs149::courseArrayLength(n)), d_result(cs149::courseArrayLength(n));
    cs149::copyToFront(d_input, input);
    cs149::copyToFront(d_result, input);
    kernellab::recordBytesToHost("exclusive_scan", [&] {
        exclusive_scan(d_input.data(), int(n), d_result.data());
        cudaDeviceSynchronize();
    });
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(cs149::frontOf(d_result, n), cs149::exclusiveScanModel(input), cs149::same, kernellab::Layout{});
    KL_REQUIRE_EQUAL(cs149::tailOf(d_result, cs149::rounded(n)), cs149::poisonedTail(), cs149::same, kernellab::Layout{});
    KL_REQUIRE_EQUAL(cs149::tailOf(d_input, cs149::rounded(n)), cs149::poisonedTail(), cs149::same, kernellab::Layout{});
}

}  // namespace

// What the task teaches, measured first: a version that launches N threads at every step runs
// the larger sizes below for minutes on the CPU backend, and `kernellab wrong` stops at this test.
TEST_CASE("exclusive_scan launches about one thread per iteration of each step's inner loop", "[exclusive-scan]") {
    // Past 2^16 elements, where rounding small steps up to whole blocks of up to 1024 threads
    // adds under a tenth to the count.
    const uint32_t n       = (1u << 16) + 1;
    const uint64_t seed    = 9999;
    const uint64_t rounded = cs149::rounded(n);
    KL_CAPTURE(n, seed);
    const auto input = cs149::randomInput(n, seed);
    kernellab::DeviceBuffer<int> d_input(cs149::courseArrayLength(n)), d_result(cs149::courseArrayLength(n));
    cs149::copyToFront(d_input, input);
    cs149::copyToFront(d_result, input);
    const kernellab::LaunchedThreads launched;
    exclusive_scan(d_input.data(), int(n), d_result.data());
    cudaDeviceSynchronize();
    const uint64_t threads = launched.count();
    KL_CHECK_LAUNCH();
    // The up-sweep's and the down-sweep's inner loops iterate rounded - 1 times each.
    const uint64_t iterations = 2 * (rounded - 1);
    kernellab::recordProperty("threads-launched", "exclusive_scan", int64_t(threads * 100 / iterations),
                              kernellab::atMost(cs149::kMostThreadsPercent));
    KL_REQUIRE_EQUAL(cs149::frontOf(d_result, n), cs149::exclusiveScanModel(input), cs149::same, kernellab::Layout{});
}

TEST_CASE("exclusive_scan scans random arrays of every hostile size and writes nothing past the rounded buffer",
          "[exclusive-scan]") {
    const uint32_t n    = GENERATE(from_range(cs149::sizes()));
    const uint64_t seed = 9000 + n;
    KL_CAPTURE(n, seed);
    checkExclusiveScan(cs149::randomInput(n, seed));
}

TEST_CASE("exclusive_scan scans the course's `ones` input", "[exclusive-scan]") {
    const uint32_t n = GENERATE(from_range(cs149::sizes()));
    KL_CAPTURE(n);
    checkExclusiveScan(cs149::ones(n));
}

TEST_CASE("exclusive_scan scans the course's largest array, 40M elements", "[.large]") {
    const uint32_t n    = kernellab::largeSize(cs149::kCourseSize);
    const uint64_t seed = 42;
    KL_CAPTURE(n, seed);
    checkExclusiveScan(cs149::randomInput(n, seed));
}
