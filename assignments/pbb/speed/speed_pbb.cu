// The speed program of assignment pbb (kernellab/speed.hpp says how the grader times it): the
// solution's host wrappers, and the baselines the grader compares them with, each on int32
// arrays of one size. The manifest's [[speed]] entries name the cases.
#include <algorithm>
#include <memory>
// A student's build for the grader (KERNELLAB_RECORD_ROLE 1) has no baselines: the grader times
// them in the reference's build only, and any CUB in a student's speed program is then the
// student's own, which the grader's include-graph check finds.
#if KERNELLAB_RECORD_ROLE != 1
#define KERNELLAB_SPEED_BASELINES 1
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include "cub_segmented_scan.cuh"
#endif

#include "pbb_solution.cuh"  // the solution, as the course's driver includes it; pbb::maxBlock
#include "kernellab/speed.hpp"

using kernellab::DeviceBuffer;
using kernellab::SpeedCase;

namespace {

// Block size of every solution call, as the course's own benchmark uses.
constexpr uint32_t kBlock = 256;
// The input values lie in [-kSpan, kSpan], so sums of up to 2^28 of them fit an int.
constexpr int32_t kSpan = 7;

__global__ void copyKernelInt4(int4* d_out, const int4* d_in, size_t n4) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
        d_out[i] = d_in[i];
    }
}

/**
 * An input of `n` ints, refilled from each repetition's seed, and an output of `out_n` ints whose first
 * `result_n` are the result (the rest is the call's scratch space).
 */
struct Arrays {
    Arrays(uint64_t n, uint64_t out_n, uint64_t result_n)
        : n(n), result_n(result_n), in(new DeviceBuffer<int>(n)), out(new DeviceBuffer<int>(out_n)) {}
    uint64_t n;
    uint64_t result_n;
    std::shared_ptr<DeviceBuffer<int>> in;
    std::shared_ptr<DeviceBuffer<int>> out;
};

SpeedCase overArrays(const Arrays& arrays, double bytes, std::function<void(const Arrays&)> call) {
    SpeedCase timed;
    timed.bytes = bytes;
    timed.prepare = [arrays](uint64_t seed) { kernellab::fillInts(arrays.in->data(), arrays.n, seed, kSpan); };
    timed.run = [arrays, call] { call(arrays); };
    timed.digest = [arrays] { return kernellab::deviceDigest(arrays.out->data(), arrays.result_n * sizeof(int)); };
    return timed;
}

SpeedCase copyKernel(uint64_t n) {
    return overArrays(Arrays(n, n, n), 8.0 * n, [](const Arrays& a) {
        copyKernelInt4<<<4 * 132, 256>>>((int4*)a.out->data(), (const int4*)a.in->data(), a.n / 4);
    });
}

SpeedCase deviceMemcpy(uint64_t n) {
    return overArrays(Arrays(n, n, n), 8.0 * n, [](const Arrays& a) {
        KL_CUDA(cudaMemcpyAsync(a.out->data(), a.in->data(), a.n * sizeof(int), cudaMemcpyDeviceToDevice));
    });
}

/** About one segment start in `mean_segment` elements, from the seed, made on the device: 2^28 host draws take seconds. */
__global__ void fillFlags(char* flags, uint64_t n, uint64_t seed, uint32_t mean_segment) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        flags[i] = kernellab::detail::below(kernellab::detail::streamWord(~seed, i), mean_segment) == 0;
    }
}

/** A segmented scan's case: `n` values and their `n` segment flags in, `n` ints out (9n bytes). */
SpeedCase overSegmentedArrays(uint64_t n, std::function<void(const Arrays&, char* flags)> call) {
    auto flags = std::make_shared<DeviceBuffer<char>>(n);
    SpeedCase timed = overArrays(Arrays(n, n, n), 9.0 * n, [flags, call](const Arrays& a) { call(a, flags->data()); });
    // The segments follow the repetition's seed too: nothing about the input is known before the clock starts.
    timed.prepare = [fill = timed.prepare, flags, n](uint64_t seed) {
        fill(seed);
        fillFlags<<<1024, 256>>>(flags->data(), n, seed, 1000);
        KL_CHECK_LAUNCH();
    };
    return timed;
}

#if KERNELLAB_SPEED_BASELINES
SpeedCase cubReduce(uint64_t n) {
    size_t scratch_bytes = 0;
    cub::DeviceReduce::Sum(nullptr, scratch_bytes, (int*)nullptr, (int*)nullptr, n);
    auto scratch = std::make_shared<DeviceBuffer<char>>(scratch_bytes);
    return overArrays(Arrays(n, 1, 1), 4.0 * n, [scratch, scratch_bytes](const Arrays& a) {
        size_t bytes = scratch_bytes;
        cub::DeviceReduce::Sum(scratch->data(), bytes, a.in->data(), a.out->data(), a.n);
    });
}

SpeedCase cubScan(uint64_t n) {
    size_t scratch_bytes = 0;
    cub::DeviceScan::InclusiveSum(nullptr, scratch_bytes, (int*)nullptr, (int*)nullptr, n);
    auto scratch = std::make_shared<DeviceBuffer<char>>(scratch_bytes);
    return overArrays(Arrays(n, n, n), 8.0 * n, [scratch, scratch_bytes](const Arrays& a) {
        size_t bytes = scratch_bytes;
        cub::DeviceScan::InclusiveSum(scratch->data(), bytes, a.in->data(), a.out->data(), a.n);
    });
}

/** sgmScanInc<Add<int>>'s operation in CUB, on the same kind of values and flags. */
SpeedCase cubSegmentedScan(uint64_t n) {
    size_t scratch_bytes = 0;
    cub_baseline::segmentedInclusiveSum(nullptr, scratch_bytes, nullptr, nullptr, nullptr, n);
    auto scratch = std::make_shared<DeviceBuffer<char>>(scratch_bytes);
    return overSegmentedArrays(n, [scratch, scratch_bytes](const Arrays& a, char* flags) {
        size_t bytes = scratch_bytes;
        cub_baseline::segmentedInclusiveSum(scratch->data(), bytes, a.out->data(), flags, a.in->data(), a.n);
    });
}
#endif

SpeedCase solutionReduce(uint64_t n) {
    // mapReduce leaves the result in element 0 of a MAX_BLOCK-element scratch array.
    return overArrays(Arrays(n, pbb::maxBlock(kBlock), 1), 4.0 * n, [](const Arrays& a) {
        mapReduce<Add<int>>(kBlock, uint32_t(a.n), a.out->data(), a.in->data());
    });
}

SpeedCase solutionScan(uint64_t n) {
    auto partials = std::make_shared<DeviceBuffer<int>>(pbb::maxBlock(kBlock));
    return overArrays(Arrays(n, n, n), 8.0 * n, [partials](const Arrays& a) {
        scanInc<Add<int>>(kBlock, uint32_t(a.n), a.out->data(), a.in->data(), partials->data());
    });
}

SpeedCase solutionSegmentedScan(uint64_t n) {
    auto partial_values = std::make_shared<DeviceBuffer<int>>(pbb::maxBlock(kBlock));
    auto partial_flags = std::make_shared<DeviceBuffer<char>>(pbb::maxBlock(kBlock));
    return overSegmentedArrays(n, [partial_values, partial_flags](const Arrays& a, char* flags) {
        sgmScanInc<Add<int>>(kBlock, uint32_t(a.n), a.out->data(), flags, a.in->data(), partial_values->data(),
                             partial_flags->data());
    });
}

}  // namespace

int main(int argc, char* argv[]) {
    try {
        return kernellab::speedMain(argc, argv,
                                    {{"copy", copyKernel},
                                     {"memcpy", deviceMemcpy},
#if KERNELLAB_SPEED_BASELINES
                                     {"cub-reduce", cubReduce},
                                     {"cub-scan", cubScan},
                                     {"cub-sgm-scan", cubSegmentedScan},
#endif
                                     {"mapReduce<Add<int>>", solutionReduce},
                                     {"scanInc<Add<int>>", solutionScan},
                                     {"sgmScanInc<Add<int>>", solutionSegmentedScan}});
    } catch (const std::exception& error) {
        std::fprintf(stderr, "pbb_speed: %s\n", error.what());
        return 1;
    }
}
