// The speed program of assignment reduce (kernellab/speed.hpp says how the grader times it): the
// solution's rungs 6 to 8 on int32 sums, and the baselines the grader compares them with, each
// on arrays of one size. The manifest's [[speed]] entries name the cases.
#include <memory>
// A student's build for the grader (KERNELLAB_RECORD_ROLE 1) has no baselines: the grader times
// them in the reference's build only, and any CUB in a student's speed program is then the
// student's own, which the grader's include-graph check finds.
#if KERNELLAB_RECORD_ROLE != 1
#define KERNELLAB_SPEED_BASELINES 1
#include <cub/device/device_reduce.cuh>
#endif

#include "kernellab_solution.h"  // generated: the solution's reduce_host.cuh under its own name
#include "kernellab/speed.hpp"

using kernellab::DeviceBuffer;
using kernellab::SpeedCase;

namespace {

// Block size of every solution call, as reduce_bench uses by default.
constexpr uint32_t kBlock = 256;
// The input values lie in [-kSpan, kSpan], so sums of up to 2^28 of them fit an int.
constexpr int32_t kSpan = 7;

typedef Add<int32_t> Sum;
typedef void (*Reducer)(uint32_t, uint64_t, int32_t*, const int32_t*, int32_t*);

__global__ void copyKernelInt4(int4* d_out, const int4* d_in, size_t n4) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
        d_out[i] = d_in[i];
    }
}

/** An input of `n` ints, refilled from each repetition's seed, and an output of `out_n` ints, all of them the result. */
SpeedCase overArrays(uint64_t n, uint64_t out_n, double bytes, std::function<void(const int32_t*, int32_t*)> call) {
    auto in = std::make_shared<DeviceBuffer<int32_t>>(n);
    auto out = std::make_shared<DeviceBuffer<int32_t>>(out_n);
    SpeedCase timed;
    timed.bytes = bytes;
    timed.prepare = [in, n](uint64_t seed) { kernellab::fillInts(in->data(), n, seed, kSpan); };
    timed.run = [in, out, call] { call(in->data(), out->data()); };
    timed.digest = [out, out_n] { return kernellab::deviceDigest(out->data(), out_n * sizeof(int32_t)); };
    return timed;
}

SpeedCase copyKernel(uint64_t n) {
    return overArrays(n, n, 8.0 * n, [n](const int32_t* d_in, int32_t* d_out) {
        copyKernelInt4<<<4 * 132, 256>>>((int4*)d_out, (const int4*)d_in, n / 4);
    });
}

#if KERNELLAB_SPEED_BASELINES
SpeedCase cubReduce(uint64_t n) {
    size_t scratch_bytes = 0;
    cub::DeviceReduce::Sum(nullptr, scratch_bytes, (int32_t*)nullptr, (int32_t*)nullptr, n);
    auto scratch = std::make_shared<DeviceBuffer<char>>(scratch_bytes);
    return overArrays(n, 1, 4.0 * n, [n, scratch, scratch_bytes](const int32_t* d_in, int32_t* d_out) {
        size_t bytes = scratch_bytes;
        cub::DeviceReduce::Sum(scratch->data(), bytes, d_in, d_out, n);
    });
}
#endif

/** A rung's host wrapper on `n` ints: the result in one int, its scratch memory outside the digest. */
kernellab::SpeedCaseMaker solutionRung(Reducer reduce) {
    return [reduce](uint64_t n) {
        auto scratch = std::make_shared<DeviceBuffer<int32_t>>(reduceScratchElems(n));
        return overArrays(n, 1, 4.0 * n, [reduce, n, scratch](const int32_t* d_in, int32_t* d_out) {
            reduce(kBlock, n, d_out, d_in, scratch->data());
        });
    };
}

}  // namespace

int main(int argc, char* argv[]) {
    try {
        return kernellab::speedMain(argc, argv,
                                    {{"copy", copyKernel},
#if KERNELLAB_SPEED_BASELINES
                                     {"cub-reduce", cubReduce},
#endif
                                     {"reduceShuffle<Add<int>>", solutionRung(reduceShuffle<Sum>)},
                                     {"reduceCoarsened<Add<int>>", solutionRung(reduceCoarsened<Sum>)},
                                     {"reduceOrdered<Add<int>>", solutionRung(reduceOrdered<Sum>)}});
    } catch (const std::exception& error) {
        std::fprintf(stderr, "reduce_speed: %s\n", error.what());
        return 1;
    }
}
