// The speed program of assignment cs149-scan (kernellab/speed.hpp says how the grader times it):
// exclusive_scan and find_repeats on the arrays the course's cudaScan and cudaFindRepeats give
// them, and Thrust's exclusive scan, the course's extra-credit baseline. The manifest's [[speed]]
// entries name the cases; the course times them at 1M, 10M, 20M and 40M elements.
#include <algorithm>
#include <memory>
// A student's build for the grader (KERNELLAB_RECORD_ROLE 1) has no baseline: the grader times it
// in the reference's build only, and any Thrust in a student's speed program is the student's own.
#if KERNELLAB_RECORD_ROLE != 1
#define KERNELLAB_SPEED_BASELINES 1
#include <thrust/execution_policy.h>
#include <thrust/scan.h>
#endif

#include "kernellab_solution.h"  // generated: the student's scan.cu
#include "kernellab/speed.hpp"

using kernellab::DeviceBuffer;
using kernellab::SpeedCase;

namespace {

// The course's checker draws values 0..9; these are -4..4: nine values, about one neighbour in
// nine repeats, and every prefix sum of 2^26 of them fits an int.
constexpr int32_t kSpan = 4;

/** The course's nextPow2: the length of the arrays its wrappers allocate for n elements. */
uint64_t rounded(uint64_t n) {
    uint64_t length = 1;
    while (length < n) { length *= 2; }
    return length;
}

/** Copies n ints with one thread per element. */
__global__ void copyInts(int* out, const int* in, uint64_t n) {
    const uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
    if (i < n) { out[i] = in[i]; }
}

/** A baseline: `call` writes an output of n ints from an input of n, filled from each repetition's seed. */
SpeedCase overArrays(uint64_t n, std::function<void(int* out, const int* in)> call) {
    auto input = std::make_shared<DeviceBuffer<int>>(n);
    auto output = std::make_shared<DeviceBuffer<int>>(n);
    SpeedCase timed;
    timed.bytes = 8.0 * n;
    timed.prepare = [input, n](uint64_t seed) { kernellab::fillInts(input->data(), n, seed, kSpan); };
    timed.run = [input, output, call] { call(output->data(), input->data()); };
    timed.digest = [output, n] { return kernellab::deviceDigest(output->data(), n * sizeof(int)); };
    return timed;
}

/** The copy baseline every speed program has: the bytes a scan moves at best. */
SpeedCase copyBaseline(uint64_t n) {
    return overArrays(n, [n](int* out, const int* in) { copyInts<<<(n + 255) / 256, 256>>>(out, in, n); });
}

/** Both arrays nextPow2(n) long, as cudaScan allocates them; the result starts as a copy of the input. */
SpeedCase solutionScan(uint64_t n) {
    auto input = std::make_shared<DeviceBuffer<int>>(rounded(n));
    auto result = std::make_shared<DeviceBuffer<int>>(rounded(n));
    SpeedCase timed;
    timed.bytes = 8.0 * n;
    timed.prepare = [input, result, n](uint64_t seed) {
        kernellab::fillInts(input->data(), n, seed, kSpan);
        KL_CUDA(cudaMemcpyAsync(result->data(), input->data(), n * sizeof(int), cudaMemcpyDeviceToDevice));
    };
    timed.run = [input, result, n] { exclusive_scan(input->data(), int(n), result->data()); };
    timed.digest = [result, n] { return kernellab::deviceDigest(result->data(), n * sizeof(int)); };
    return timed;
}

/** Both arrays nextPow2(n) long, as cudaFindRepeats allocates them; the digest covers the count and the indices before it. */
SpeedCase solutionFindRepeats(uint64_t n) {
    auto input = std::make_shared<DeviceBuffer<int>>(rounded(n));
    auto output = std::make_shared<DeviceBuffer<int>>(rounded(n));
    auto count = std::make_shared<int>(0);
    SpeedCase timed;
    timed.bytes = 8.0 * n;
    timed.prepare = [input, n, count](uint64_t seed) {
        kernellab::fillInts(input->data(), n, seed, kSpan);
        *count = 0;
    };
    timed.run = [input, output, n, count] { *count = find_repeats(input->data(), int(n), output->data()); };
    timed.digest = [output, n, count] {
        const uint64_t found = uint64_t(std::min<int64_t>(std::max(*count, 0), int64_t(n)));
        return kernellab::deviceDigest(output->data(), found * sizeof(int)) * 31 + found;
    };
    return timed;
}

#if KERNELLAB_SPEED_BASELINES
SpeedCase thrustScan(uint64_t n) {
    return overArrays(n, [n](int* out, const int* in) { thrust::exclusive_scan(thrust::device, in, in + n, out); });
}
#endif

}  // namespace

int main(int argc, char* argv[]) {
    try {
        return kernellab::speedMain(argc, argv,
                                    {{"copy", copyBaseline},
#if KERNELLAB_SPEED_BASELINES
                                     {"thrust-scan", thrustScan},
#endif
                                     {"exclusive_scan", solutionScan},
                                     {"find_repeats", solutionFindRepeats}});
    } catch (const std::exception& error) {
        std::fprintf(stderr, "cs149-scan_speed: %s\n", error.what());
        return 1;
    }
}
