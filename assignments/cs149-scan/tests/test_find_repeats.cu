// Task find-repeats: find_repeats on the arrays cudaFindRepeats gives it, against the sequential model.
#include "cs149_testing.cuh"

namespace {

/**
 * Runs find_repeats as cudaFindRepeats does (both arrays nextPow2(n) long, the output
 * uninitialized) and checks the count and the indices before it, and that nothing past the
 * rounded output was written. The output past the count is not the course's to check.
 */
void checkFindRepeats(const std::vector<int>& input) {
    const uint32_t n = uint32_t(input.size());
    kernellab::DeviceBuffer<int> d_input(cs149::courseArrayLength(n)), d_output(cs149::courseArrayLength(n));
    // The rounded input's elements past n are uninitialized in the course: here copies of the
    // last element, so that comparing it with the element after it finds a repeat that is not there.
    auto padded = input;
    padded.resize(cs149::rounded(n), input.back());
    cs149::copyToFront(d_input, padded);
    int count = 0;
    kernellab::recordBytesToHost("find_repeats", [&] {
        count = find_repeats(d_input.data(), int(n), d_output.data());
        cudaDeviceSynchronize();
    });
    KL_CHECK_LAUNCH();
    const auto expected = cs149::findRepeatsModel(input);
    // The count first, then as many indices as the model has (or the count says, if fewer):
    // a wrong count is the first mismatch, and no element past the output is read.
    std::vector<int> found{count};
    const auto output = cs149::frontOf(d_output, uint32_t(std::clamp<int64_t>(count, 0, expected.size() - 1)));
    found.insert(found.end(), output.begin(), output.end());
    KL_REQUIRE_EQUAL(found, expected, cs149::same, kernellab::Layout{});
    KL_REQUIRE_EQUAL(cs149::tailOf(d_output, cs149::rounded(n)), cs149::poisonedTail(), cs149::same, kernellab::Layout{});
}

/** Distinct neighbours everywhere: 0, 1, 0, 1, ... never repeats. */
std::vector<int> noRepeats(uint32_t n) {
    std::vector<int> input(n);
    for (uint32_t i = 0; i < n; i++) { input[i] = int(i % 2); }
    return input;
}

/** Runs of `run` equal elements at both ends, distinct neighbours between them. */
std::vector<int> runsAtTheEnds(uint32_t n, uint32_t run) {
    auto input = noRepeats(n);
    for (uint32_t i = 0; i < std::min(run, n); i++) {
        input[i] = 7;
        input[n - 1 - i] = 9;
    }
    return input;
}

}  // namespace

TEST_CASE("find_repeats finds the repeats of random arrays of every hostile size", "[find-repeats]") {
    const uint32_t n    = GENERATE(from_range(cs149::sizes()));
    const uint64_t seed = 9500 + n;
    KL_CAPTURE(n, seed);
    // Values 0..9, as the course's checker draws them: about one neighbour in ten repeats.
    checkFindRepeats(kernellab::randomInts(n, seed, 0, 9));
}

TEST_CASE("find_repeats finds none where no neighbours are equal, and every index where all are", "[find-repeats]") {
    const uint32_t n = GENERATE(from_range(cs149::sizes()));
    const bool all   = GENERATE(false, true);
    KL_CAPTURE(n, all);
    checkFindRepeats(all ? cs149::ones(n) : noRepeats(n));
}

TEST_CASE("find_repeats finds the runs at both ends of the array", "[find-repeats]") {
    const uint32_t n   = GENERATE(from_range(cs149::sizes()));
    const uint32_t run = GENERATE(2u, 33u);
    KL_CAPTURE(n, run);
    checkFindRepeats(runsAtTheEnds(n, run));
}

TEST_CASE("find_repeats finds the repeats of the course's largest array, 40M elements", "[.large]") {
    const uint32_t n    = kernellab::largeSize(cs149::kCourseSize);
    const uint64_t seed = 43;
    KL_CAPTURE(n, seed);
    checkFindRepeats(kernellab::randomInts(n, seed, 0, 9));
}
