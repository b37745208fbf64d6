// The speed program of an assignment: named cases timed for the grader, which compares them with
// the reference's and the baselines' (a copy kernel, CUB) timed the same way on the same GPU.
//
//   <id>_speed --cases A,B,... --sizes N,M,... --repetitions R --seed S --out FILE
//
// Every case is timed at every size, in one process (a CUDA context costs a fraction of a second
// to make). Each repetition gets a fresh input (made on the device from the seed and the repetition's
// number, outside the timer), the L2 cache flushed, then one timed call: from the host clock
// before the launch to after a device-wide synchronize (so work hidden on another stream is
// timed too), with CUDA events around it as well. After the timer, a digest of the output is
// taken on the device. Each repetition is one JSON line in FILE:
//   {"case": ..., "size": N, "repetition": r, "host_us": t, "event_us": t, "bytes": b, "digest": d}
// The grader's judge compares the digests with the reference's for the same inputs: an output
// that is wrong in any timed repetition (a result cached between repetitions, say) costs the
// case its speed points.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"

namespace kernellab {

/** One timed operation on arrays of one size, its buffers owned by the closures. */
struct SpeedCase {
    double bytes = 0;                          // read plus written by one call: for GB/s
    std::function<void(uint32_t)> prepare;     // a fresh input for repetition r (not timed)
    std::function<void()> run;                 // the timed call
    std::function<uint64_t()> digest;          // a digest of the output (not timed)
};

using SpeedCaseMaker = std::function<SpeedCase(uint64_t size)>;

namespace detail {

__device__ inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/** Sum over the words of mix(word, index): one pass, any order, position-sensitive. */
__global__ void digestKernel(const uint32_t* words, uint64_t count, unsigned long long* sum) {
    uint64_t local = 0;
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x) {
        local += mix64((uint64_t(words[i]) << 32) ^ (i * 0x9E3779B97F4A7C15ULL));
    }
    for (int offset = 16; offset > 0; offset /= 2) { local += __shfl_down_sync(0xffffffffu, local, offset); }
    if ((threadIdx.x & 31) == 0) { atomicAdd(sum, (unsigned long long)local); }
}

/** Small integers from the seed, the repetition and the index, so any operation stays exact. */
__global__ void fillKernel(int32_t* values, uint64_t count, uint64_t seed, uint32_t repetition, int32_t span) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint64_t h = mix64(seed ^ mix64(i + (uint64_t(repetition) << 40)));
        values[i] = int32_t(h % uint64_t(2 * span + 1)) - span;
    }
}

inline std::vector<std::string> splitComma(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');) {
        if (!part.empty()) { parts.push_back(part); }
    }
    return parts;
}

}  // namespace detail

/** The digest of `bytes` bytes of device memory (the tail padded with zeros to a word). */
inline uint64_t deviceDigest(const void* data, size_t bytes) {
    DeviceBuffer<unsigned long long> sum(1);
    KL_CUDA(cudaMemset(sum.data(), 0, sizeof(unsigned long long)));
    const uint64_t words = bytes / 4;
    if (words > 0) {
        detail::digestKernel<<<1024, 256>>>(static_cast<const uint32_t*>(data), words, sum.data());
        KL_CHECK_LAUNCH();
    }
    uint64_t tail = 0;
    if (bytes % 4 != 0) {
        KL_CUDA(cudaMemcpy(&tail, static_cast<const char*>(data) + 4 * words, bytes % 4, cudaMemcpyDeviceToHost));
    }
    return sum.download()[0] ^ tail;
}

/** Fills `count` ints with values in [-span, span] from the seed and the repetition. */
inline void fillInts(int32_t* values, uint64_t count, uint64_t seed, uint32_t repetition, int32_t span) {
    detail::fillKernel<<<1024, 256>>>(values, count, seed, repetition, span);
    KL_CHECK_LAUNCH();
}

/** Times `repetitions` calls of one case at one size, writing a line per repetition to `out`. */
inline void timeCase(std::FILE* out, const std::string& name, uint64_t size, SpeedCase& timed, uint32_t repetitions,
                     uint32_t warmup, DeviceBuffer<char>& flush) {
    for (uint32_t i = 0; i < warmup; i++) {
        timed.prepare(repetitions + i);
        timed.run();
    }
    KL_CHECK_LAUNCH();
    cudaEvent_t start, stop;
    KL_CUDA(cudaEventCreate(&start));
    KL_CUDA(cudaEventCreate(&stop));
    for (uint32_t repetition = 0; repetition < repetitions; repetition++) {
        timed.prepare(repetition);
        KL_CUDA(cudaMemsetAsync(flush.data(), int(repetition & 0xff), flush.size()));
        KL_CUDA(cudaDeviceSynchronize());
        const auto host_start = std::chrono::steady_clock::now();
        KL_CUDA(cudaEventRecord(start));
        timed.run();
        KL_CUDA(cudaEventRecord(stop));
        KL_CUDA(cudaDeviceSynchronize());
        const auto host_stop = std::chrono::steady_clock::now();
        KL_CUDA(cudaGetLastError());
        float event_ms = 0;
        KL_CUDA(cudaEventElapsedTime(&event_ms, start, stop));
        const double host_us = std::chrono::duration<double, std::micro>(host_stop - host_start).count();
        std::fprintf(out,
                     "{\"case\": \"%s\", \"size\": %llu, \"repetition\": %u, \"host_us\": %.3f, \"event_us\": %.3f, "
                     "\"bytes\": %.0f, \"digest\": \"%016llx\"}\n",
                     name.c_str(), (unsigned long long)size, repetition, host_us, event_ms * 1000.0, timed.bytes,
                     (unsigned long long)timed.digest());
        std::fflush(out);
    }
    KL_CUDA(cudaEventDestroy(start));
    KL_CUDA(cudaEventDestroy(stop));
}

/** The main of a speed program: times every named case at every size, writes their lines. */
inline int speedMain(int argc, char* argv[], const std::map<std::string, SpeedCaseMaker>& cases) {
    std::map<std::string, std::string> options{{"--repetitions", "20"}, {"--seed", "1"}, {"--warmup", "3"}};
    for (int i = 1; i + 1 < argc; i += 2) { options[argv[i]] = argv[i + 1]; }
    if (!options.count("--cases") || !options.count("--sizes") || !options.count("--out")) {
        std::fprintf(stderr, "usage: %s --cases A,B --sizes N,M --out FILE [--repetitions R] [--seed S]\ncases:", argv[0]);
        for (const auto& entry : cases) { std::fprintf(stderr, " %s", entry.first.c_str()); }
        std::fprintf(stderr, "\n");
        return 2;
    }
    const std::vector<std::string> names = detail::splitComma(options["--cases"]);
    for (const std::string& name : names) {
        if (!cases.count(name)) {
            std::fprintf(stderr, "no speed case %s\n", name.c_str());
            return 2;
        }
    }
    const uint32_t repetitions = uint32_t(std::strtoul(options["--repetitions"].c_str(), nullptr, 10));
    const uint32_t warmup = uint32_t(std::strtoul(options["--warmup"].c_str(), nullptr, 10));
    std::FILE* out = std::fopen(options["--out"].c_str(), "w");
    if (out == nullptr) {
        std::fprintf(stderr, "cannot write %s\n", options["--out"].c_str());
        return 2;
    }
    int device = 0, l2_bytes = 0;
    KL_CUDA(cudaGetDevice(&device));
    KL_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    DeviceBuffer<char> flush(2 * size_t(l2_bytes));
    for (const std::string& size_text : detail::splitComma(options["--sizes"])) {
        const uint64_t size = std::strtoull(size_text.c_str(), nullptr, 10);
        for (const std::string& name : names) {
            SpeedCase timed = cases.at(name)(size);  // its buffers are freed before the next case's are made
            timeCase(out, name, size, timed, repetitions, warmup, flush);
        }
    }
    std::fclose(out);
    return 0;
}

}  // namespace kernellab
