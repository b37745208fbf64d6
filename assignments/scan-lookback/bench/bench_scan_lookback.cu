// Speed of the reference's single-pass scanLookback against cudaMemcpy, CUB's single-pass
// DeviceScan::InclusiveSum and pbb's three-pass scanInc, all timed in the same run. A benchmark,
// not a test: it prints a table.
//
//   scan-lookback_bench [--block B] [--min-log2 K] [--max-log2 K]
//
// Method: CUDA events around each repetition, the L2 cache flushed before each one, warm-up
// first, the median of the repetitions reported (kernellab/timing.hpp). Every timed result is
// checked against a host model once, so a fast wrong kernel cannot pass.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "scanLookback.cu.h"
#include "pbb_three_pass.h"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"
#include "kernellab/timing.hpp"

using kernellab::DeviceBuffer;

namespace {

void require(bool ok, const std::string& what) {
    if (!ok) {
        std::fprintf(stderr, "scan-lookback_bench: %s: the timed result is WRONG\n", what.c_str());
        std::exit(EXIT_FAILURE);
    }
}

void printRow(uint32_t log2n, const char* name, double micros, double cub_micros, double memcpy_micros) {
    const double bytes = 8.0 * double(size_t(1) << log2n);  // an int read and an int written per element
    std::printf("| 2^%u | %-32s | %9.1f | %6.0f | %5.2fx | %5.2fx |\n", log2n, name, micros, bytes / (micros * 1e3),
                cub_micros / micros, memcpy_micros / micros);
}

void benchSize(uint32_t log2n, uint32_t block, kernellab::MedianTimer& timer) {
    const uint32_t n = uint32_t(1) << log2n;
    const auto input = kernellab::randomInts(n, log2n, -7, 7);
    std::vector<int> expected(n);
    int acc = 0;
    for (uint32_t i = 0; i < n; i++) { expected[i] = acc += input[i]; }
    DeviceBuffer<int> d_in(input), d_out(n), d_pbb_tmp(pbbScratchElements());
    DeviceBuffer<char> d_scratch(scanLookbackScratchBytes<Add<int>>(block, n));
    size_t cub_bytes = 0;
    cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, d_in.data(), d_out.data(), n);
    DeviceBuffer<char> d_cub(cub_bytes);

    const double memcpy_us = timer.medianMicros([&] {
        KL_CUDA(cudaMemcpyAsync(d_out.data(), d_in.data(), size_t(n) * sizeof(int), cudaMemcpyDeviceToDevice));
    });
    const double cub_us = timer.medianMicros([&] {
        cub::DeviceScan::InclusiveSum(d_cub.data(), cub_bytes, d_in.data(), d_out.data(), n);
    });
    require(d_out.download() == expected, "CUB DeviceScan::InclusiveSum");
    d_out.poison();
    const double lookback_us = timer.medianMicros([&] {
        scanLookback<Add<int>>(block, n, d_out.data(), d_in.data(), d_scratch.data());
    });
    require(d_out.download() == expected, "scanLookback<Add<int>>");
    d_out.poison();
    const double pbb_us = timer.medianMicros([&] { pbbScanInc(block, n, d_out.data(), d_in.data(), d_pbb_tmp.data()); });
    require(d_out.download() == expected, "pbb scanInc<Add<int>>");

    printRow(log2n, "cudaMemcpy D2D", memcpy_us, cub_us, memcpy_us);
    printRow(log2n, "CUB DeviceScan::InclusiveSum", cub_us, cub_us, memcpy_us);
    printRow(log2n, "scanLookback<Add<int>>", lookback_us, cub_us, memcpy_us);
    printRow(log2n, "pbb scanInc<Add<int>> (3 passes)", pbb_us, cub_us, memcpy_us);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char* argv[]) {
    const uint32_t block    = kernellab::benchOption(argc, argv, "--block", 1024);
    const uint32_t min_log2 = kernellab::benchOption(argc, argv, "--min-log2", 20);
    const uint32_t max_log2 = kernellab::benchOption(argc, argv, "--max-log2", 28);
    try {
        std::printf("device: %s\n", kernellab::describeDevice().c_str());
        std::printf("block size %u, %u ints per thread, median of repetitions, L2 flushed before each\n\n", block,
                    itemsPerThread<Add<int>>());
        std::printf("| N | kernel | time (us) | GB/s | CUB / this | memcpy / this |\n|---|---|---|---|---|---|\n");
        for (uint32_t log2n = min_log2; log2n <= max_log2; log2n += 2) {
            kernellab::MedianTimer timer(5, log2n <= 22 ? 200 : 50);
            benchSize(log2n, block, timer);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "scan-lookback_bench: %s\n", e.what());
        return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}
