// The speed program of assignment scan-lookback (kernellab/speed.hpp says how the grader times
// it): the solution's scanLookback and the baselines the grader compares it with, each on int32
// arrays of one size. The manifest's [[speed]] entries name the cases.
#include <memory>
// A student's build for the grader (KERNELLAB_RECORD_ROLE 1) has no baselines: the grader times
// them in the reference's build only, and any CUB in a student's speed program is then the
// student's own, which the grader's include-graph check finds.
#if KERNELLAB_RECORD_ROLE != 1
#define KERNELLAB_SPEED_BASELINES 1
#include <cub/device/device_scan.cuh>
#endif

#include "kernellab_solution.h"  // generated: the solution's scanLookback.cu.h under its own name
#include "kernellab/speed.hpp"

using kernellab::DeviceBuffer;
using kernellab::SpeedCase;

namespace {

// The block size of the timed calls: the reference's fastest on an H100 (docs/performance.md).
constexpr uint32_t kBlock = 1024;
// The input values lie in [-kSpan, kSpan], so sums of up to 2^28 of them fit an int.
constexpr int32_t kSpan = 7;

/** A case over an input and an output of `n` ints, the input refilled from each repetition's seed. */
SpeedCase overArrays(uint64_t n, std::function<void(int*, const int*)> call) {
    auto in = std::make_shared<DeviceBuffer<int>>(n);
    auto out = std::make_shared<DeviceBuffer<int>>(n);
    SpeedCase timed;
    timed.bytes = 8.0 * n;
    timed.prepare = [in, n](uint64_t seed) { kernellab::fillInts(in->data(), n, seed, kSpan); };
    timed.run = [in, out, call] { call(out->data(), in->data()); };
    timed.digest = [out, n] { return kernellab::deviceDigest(out->data(), n * sizeof(int)); };
    return timed;
}

__global__ void copyKernelInt4(int4* d_out, const int4* d_in, size_t n4) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
        d_out[i] = d_in[i];
    }
}

/** The copy kernel every speed program has (the grader's "copy"): a case faster than it is not plausible. */
SpeedCase copyKernel(uint64_t n) {
    return overArrays(n, [n](int* d_out, const int* d_in) {
        copyKernelInt4<<<4 * 132, 256>>>((int4*)d_out, (const int4*)d_in, n / 4);
    });
}

SpeedCase deviceMemcpy(uint64_t n) {
    return overArrays(n, [n](int* d_out, const int* d_in) {
        KL_CUDA(cudaMemcpyAsync(d_out, d_in, n * sizeof(int), cudaMemcpyDeviceToDevice));
    });
}

#if KERNELLAB_SPEED_BASELINES
SpeedCase cubScan(uint64_t n) {
    size_t scratch_bytes = 0;
    cub::DeviceScan::InclusiveSum(nullptr, scratch_bytes, (int*)nullptr, (int*)nullptr, n);
    auto scratch = std::make_shared<DeviceBuffer<char>>(scratch_bytes);
    return overArrays(n, [scratch, scratch_bytes, n](int* d_out, const int* d_in) {
        size_t bytes = scratch_bytes;
        cub::DeviceScan::InclusiveSum(scratch->data(), bytes, d_in, d_out, n);
    });
}
#endif

SpeedCase solutionScan(uint64_t n) {
    auto scratch = std::make_shared<DeviceBuffer<char>>(scanLookbackScratchBytes<Add<int>>(kBlock, uint32_t(n)));
    return overArrays(n, [scratch, n](int* d_out, const int* d_in) {
        scanLookback<Add<int>>(kBlock, uint32_t(n), d_out, d_in, scratch->data());
    });
}

}  // namespace

int main(int argc, char* argv[]) {
    try {
        return kernellab::speedMain(argc, argv,
                                    {{"copy", copyKernel},
                                     {"memcpy", deviceMemcpy},
#if KERNELLAB_SPEED_BASELINES
                                     {"cub-scan", cubScan},
#endif
                                     {"scanLookback<Add<int>>", solutionScan}});
    } catch (const std::exception& error) {
        std::fprintf(stderr, "scan-lookback_speed: %s\n", error.what());
        return 1;
    }
}
