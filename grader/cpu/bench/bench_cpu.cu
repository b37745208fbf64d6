// Speed of the CPU backend (a benchmark, not a test): the cost of one suspension at a warp
// barrier, and the pbb reference's three-kernel scanInc<Add<int>> on 2^20 elements, under the
// thread orders that KERNELLAB_CPU_ORDERS asks for (default 3). Prints a Markdown table.
#include <chrono>
#include <cstdio>
#include <functional>
#include "hostSkel.cu.h"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"

namespace {

constexpr int kSyncsPerThread = 200;

__global__ void warpBarriers(int* out) {
    int acc = 0;
    for (int i = 0; i < kSyncsPerThread; i++) {
        acc += i;
        __syncwarp();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

/** Median wall time of `runs` calls of `work`, in milliseconds. */
double medianMs(int runs, const std::function<void()>& work) {
    std::vector<double> times;
    for (int r = 0; r < runs; r++) {
        const auto start = std::chrono::steady_clock::now();
        work();
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

int main() {
    const uint32_t blocks = 64, block = 1024;
    kernellab::DeviceBuffer<int> d_sync_out(blocks * block);
    const double sync_ms = medianMs(3, [&] {
        warpBarriers<<<blocks, block>>>(d_sync_out.data());
        KL_CHECK_LAUNCH();
    });
    const double suspensions = double(blocks) * block * kSyncsPerThread;

    const uint32_t n = 1u << 20;
    const auto input = kernellab::randomInts(n, 1, -9, 9);
    kernellab::DeviceBuffer<int> d_in(input), d_out(n), d_tmp(MAX_BLOCK);
    const double scan_ms = medianMs(3, [&] {
        scanInc<Add<int>>(256, n, d_out.data(), d_in.data(), d_tmp.data());
        KL_CHECK_LAUNCH();
    });
    const auto out = d_out.download();
    int expected = 0;
    for (uint32_t i = 0; i < n; i++) {
        expected += input[i];
        if (out[i] != expected) {
            std::fprintf(stderr, "scanInc gave a wrong result at index %u\n", i);
            return 1;
        }
    }
    std::printf("| what | median time | per unit |\n|---|---|---|\n");
    std::printf("| __syncwarp: %d x %u threads x %d | %.1f ms | %.1f ns per suspension |\n", blocks, block,
                kSyncsPerThread, sync_ms, sync_ms * 1e6 / suspensions);
    std::printf("| scanInc<Add<int>>, 2^20 elements, block 256 | %.1f ms | %.1f ns per element |\n", scan_ms,
                scan_ms * 1e6 / n);
    return 0;
}
