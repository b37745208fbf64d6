// The reduction ladder's speed: every rung of the solution under test (the reference, or a
// student's folder) on int32 sums against CUB's DeviceReduce::Sum and a copy kernel, all timed in
// the same run. A benchmark, not a test: it prints a table.
//
//   reduce_bench [--block B] [--min-log2 K] [--max-log2 K]
//
// Method (kernellab::MedianTimer): CUDA events around each repetition, the L2 flushed before each
// one, warm-up first, the median of the repetitions reported. Every timed result is checked
// against the host's sum once: a wrong rung's row says WRONG instead of a time (the exit status
// is then 1), so a fast wrong kernel cannot pass. A rung's time includes all its launches (and,
// for rungs 1 to 3, the copy of the input they reduce in place).
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "kernellab_solution.h"  // generated: the solution's reduce_host.cuh
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"
#include "kernellab/timing.hpp"

using kernellab::DeviceBuffer;

namespace {

typedef Add<int32_t> Sum;
typedef void (*Reducer)(uint32_t, uint64_t, int32_t*, const int32_t*, int32_t*);

struct Rung {
    const char* name;
    Reducer reduce;
};

const Rung kLadder[] = {
    {"1 neighboured pairs (given)", reduceNeighbored<Sum>},
    {"2 compact threads", reduceCompact<Sum>},
    {"3 interleaved pairs", reduceInterleaved<Sum>},
    {"4 shared memory, add during load", reduceShared<Sum>},
    {"5 warp tail with __syncwarp", reduceWarpTail<Sum>},
    {"6 warp shuffle", reduceShuffle<Sum>},
    {"7 coarsened, one atomic per block", reduceCoarsened<Sum>},
    {"8 ordered (shared-memory staging)", reduceOrdered<Sum>},
};

/** The copy baseline: 16-byte accesses, grid-stride, as a tuned memory-bound kernel would. */
__global__ void copyKernelInt4(int4* d_out, const int4* d_in, size_t n4) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
        d_out[i] = d_in[i];
    }
}

void printRow(uint32_t log2n, const std::string& name, double micros, double bytes, double previous_micros,
              double cub_micros) {
    char vs_previous[16] = "-";
    if (previous_micros > 0) { std::snprintf(vs_previous, sizeof vs_previous, "%.2fx", previous_micros / micros); }
    std::printf("| 2^%u | %-34s | %9.1f | %6.0f | %8s | %5.2fx |\n", log2n, name.c_str(), micros,
                bytes / (micros * 1e3), vs_previous, cub_micros / micros);
}

/** Prints the rows of one size; false when a rung's result was wrong. */
bool benchSize(uint32_t log2n, uint32_t block) {
    const size_t n = size_t(1) << log2n;
    const auto input = kernellab::randomInts(n, log2n, -9, 9);
    int64_t expected = 0;
    for (int32_t x : input) { expected += x; }
    DeviceBuffer<int32_t> d_in(input), d_copy(n), d_out(1), d_scratch(reduceScratchElems(n));
    size_t cub_bytes = 0;
    KL_CUDA(cub::DeviceReduce::Sum(nullptr, cub_bytes, d_in.data(), d_out.data(), n));
    DeviceBuffer<char> d_cub(cub_bytes);
    kernellab::MedianTimer timer(5, log2n <= 22 ? 200 : 50);
    const double read_bytes = 4.0 * n;

    const double copy_us = timer.medianMicros([&] {
        copyKernelInt4<<<4 * deviceFigures().sms, 256>>>((int4*)d_copy.data(), (const int4*)d_in.data(), n / 4);
    });
    if (d_copy.download() != input) { throw std::runtime_error("the copy kernel's result is WRONG"); }
    const double cub_us = timer.medianMicros([&] {
        KL_CUDA(cub::DeviceReduce::Sum(d_cub.data(), cub_bytes, d_in.data(), d_out.data(), n));
    });
    if (d_out.download()[0] != int32_t(expected)) { throw std::runtime_error("CUB's sum is WRONG"); }
    printRow(log2n, "copy kernel (int4, reads + writes)", copy_us, 2 * read_bytes, 0, cub_us);
    printRow(log2n, "CUB DeviceReduce::Sum", cub_us, read_bytes, 0, cub_us);

    double previous_us = 0;
    bool all_right = true;
    for (const Rung& rung : kLadder) {
        d_out.poison();
        const double us = timer.medianMicros([&] { rung.reduce(block, n, d_out.data(), d_in.data(), d_scratch.data()); });
        if (d_out.download()[0] != int32_t(expected)) {
            std::printf("| 2^%u | %-34s | WRONG: %d, the sum is %d |\n", log2n, rung.name, d_out.download()[0],
                        int32_t(expected));
            all_right = false;
            previous_us = 0;
            continue;
        }
        printRow(log2n, rung.name, us, read_bytes, previous_us, cub_us);
        previous_us = us;
    }
    std::fflush(stdout);
    return all_right;
}

}  // namespace

int main(int argc, char* argv[]) {
    const uint32_t block    = kernellab::benchOption(argc, argv, "--block", 256);
    const uint32_t min_log2 = kernellab::benchOption(argc, argv, "--min-log2", 20);
    const uint32_t max_log2 = kernellab::benchOption(argc, argv, "--max-log2", 28);
    try {
        std::printf("device: %s\n", kernellab::describeDevice().c_str());
        std::printf("block size %u, COARSE_FACTOR %d, int32 sums, median of repetitions, L2 flushed before each\n\n",
                    block, COARSE_FACTOR);
        std::printf("| N | rung | time (us) | GB/s | previous / this | CUB / this |\n|---|---|---|---|---|---|\n");
        bool all_right = true;
        for (uint32_t log2n = min_log2; log2n <= max_log2; log2n += 2) { all_right = benchSize(log2n, block) && all_right; }
        return all_right ? EXIT_SUCCESS : EXIT_FAILURE;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "reduce_bench: %s\n", e.what());
        return EXIT_FAILURE;
    }
}
