// Timing for benchmarks: CUDA events around each repetition, the L2 cache flushed before each one
// (so that no size is timed from the cache), warm-up runs first, the median reported; and what a
// benchmark prints about its device and reads from its command line.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"

namespace kernellab {

/** "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MB L2), driver 13000, runtime 13000, 2026-11-22": what a figure was measured on. */
inline std::string describeDevice() {
    int device = 0, driver = 0, runtime = 0;
    cudaDeviceProp prop;
    KL_CUDA(cudaGetDevice(&device));
    KL_CUDA(cudaGetDeviceProperties(&prop, device));
    KL_CUDA(cudaDriverGetVersion(&driver));
    KL_CUDA(cudaRuntimeGetVersion(&runtime));
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", "
           + std::to_string(prop.multiProcessorCount) + " SMs, " + std::to_string(prop.l2CacheSize >> 20)
           + " MB L2), driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime) + ", " + date;
}

/** The value after `--name` on the command line, or `fallback` without one. */
inline uint32_t benchOption(int argc, char* argv[], const std::string& name, uint32_t fallback) {
    for (int i = 1; i + 1 < argc; i++) {
        if (argv[i] == name) { return uint32_t(std::strtoul(argv[i + 1], nullptr, 10)); }
    }
    return fallback;
}

class MedianTimer {
  public:
    /** Flushes with a buffer of twice the L2 of the current device. */
    MedianTimer(int warmup, int reps) : warmup_(warmup), reps_(reps), flush_(2 * l2Bytes()) {}

    /** Median time of `run` in microseconds, with the L2 flushed before each repetition. */
    double medianMicros(const std::function<void()>& run) {
        for (int i = 0; i < warmup_; i++) { run(); }
        KL_CHECK_LAUNCH();
        cudaEvent_t start, stop;
        KL_CUDA(cudaEventCreate(&start));
        KL_CUDA(cudaEventCreate(&stop));
        std::vector<float> times;
        for (int i = 0; i < reps_; i++) {
            KL_CUDA(cudaMemsetAsync(flush_.data(), i & 0xff, flush_.size()));
            KL_CUDA(cudaEventRecord(start));
            run();
            KL_CUDA(cudaEventRecord(stop));
            KL_CUDA(cudaEventSynchronize(stop));
            float ms = 0;
            KL_CUDA(cudaEventElapsedTime(&ms, start, stop));
            times.push_back(ms);
        }
        KL_CHECK_LAUNCH();
        KL_CUDA(cudaEventDestroy(start));
        KL_CUDA(cudaEventDestroy(stop));
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        return times[times.size() / 2] * 1000.0;
    }

  private:
    static size_t l2Bytes() {
        int device = 0, bytes = 0;
        KL_CUDA(cudaGetDevice(&device));
        KL_CUDA(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
        return size_t(bytes);
    }

    int warmup_;
    int reps_;
    DeviceBuffer<char> flush_;
};

}  // namespace kernellab
