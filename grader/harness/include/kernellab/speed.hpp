// The speed program of an assignment: named cases that the grader times with its own clock,
// against the reference's and the baselines' (a copy kernel, CUB) on the same GPU.
//
//   <id>_speed --cases A,B,... --sizes N,M,... --commands FD --replies FD [--warmup W] [--wait spin|sleep]
//
// The program never measures time: what a process running student code writes could be forged
// (timing lines appended at exit, say). It obeys the grader over two pipes instead. Once its
// device is ready it replies `started` and waits, asleep, for a pass: `serve A,B` serves those of
// its --cases. For each size, and each of those cases at that size, after W untimed warm-up calls
// it replies `ready CASE SIZE BYTES`; then, for each repetition, it flushes the L2 cache, waits
// for the device and replies `armed`. The grader starts its clock and sends `time SEED` (fill a
// fresh input from SEED, make the timed call, wait for the device, digest the output) or
// `overhead SEED` (the same without the call); the program replies `done DIGEST`, and the grader
// stops its clock on reading it. `next` moves to the next case; after the last it replies
// `finished` and waits for the next pass. `end`, or the grader's end of file, ends the program:
// one program serves all of a grade's passes of its cases, since a start (a process, a sandbox,
// a CUDA context) costs more than a pass. The input exists only once the clock runs (its seed is
// a secret the grader draws for each repetition), so no work on it can happen before; the clock
// stops only on the digest of the right output, so no work can happen after. Work hidden on
// another stream is timed too: the program waits for the whole device. The grader subtracts the
// reference's `overhead` time (fill, digest, the pipes' latency) and compares every digest with
// the reference's for the same seed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/grader_commands.hpp"

namespace kernellab {

/** One timed operation on arrays of one size, its buffers owned by the closures. */
struct SpeedCase {
    double bytes = 0;                          // read plus written by one call: for GB/s
    std::function<void(uint64_t)> prepare;     // a fresh input from the seed (inside the grader's clock)
    std::function<void()> run;                 // the timed call
    std::function<uint64_t()> digest;          // a digest of the output (inside the grader's clock)
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

/** The `index`-th word of the stream of `seed`: splitmix64, one mix a word. */
__device__ inline uint64_t streamWord(uint64_t seed, uint64_t index) {
    return mix64(mix64(seed) + (index + 1) * 0x9E3779B97F4A7C15ULL);
}

/** `word` mapped onto [0, bound) by its high half times `bound`, without a division: a 64-bit
 * modulo per element made the fill take three times as long as the kernels it feeds, and every
 * timed window holds a fill (the grader subtracts it, but its noise stays). */
__device__ inline uint32_t below(uint64_t word, uint32_t bound) {
    return uint32_t(((word >> 32) * bound) >> 32);
}

/** Small integers from the seed and the index, so any operation stays exact. */
__global__ void fillKernel(int32_t* values, uint64_t count, uint64_t seed, int32_t span) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x) {
        values[i] = int32_t(below(streamWord(seed, i), uint32_t(2 * span + 1))) - span;
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

/** The digest's accumulator, made once (before the first window, by speedMain) and freed with the
 *  program. Made and freed in every digest, it cost 6 to 11 us of each window on an H100, a
 *  cost that differed from one run of a program to the next (docs/performance.md). */
inline unsigned long long* digestSum() {
    static unsigned long long* const sum = [] {
        unsigned long long* made = nullptr;
        KL_CUDA(cudaMalloc(&made, sizeof *made));
        return made;
    }();
    return sum;
}

}  // namespace detail

/** The digest of `bytes` bytes of device memory (the tail padded with zeros to a word). */
inline uint64_t deviceDigest(const void* data, size_t bytes) {
    unsigned long long* const sum = detail::digestSum();
    KL_CUDA(cudaMemsetAsync(sum, 0, sizeof *sum));
    const uint64_t words = bytes / 4;
    if (words > 0) {
        // No more blocks than words need: the digest of a reduction's one word is one block.
        const unsigned blocks = unsigned(std::min<uint64_t>(1024, (words + 255) / 256));
        detail::digestKernel<<<blocks, 256>>>(static_cast<const uint32_t*>(data), words, sum);
        KL_CHECK_LAUNCH();
    }
    uint64_t tail = 0;
    if (bytes % 4 != 0) {
        KL_CUDA(cudaMemcpy(&tail, static_cast<const char*>(data) + 4 * words, bytes % 4, cudaMemcpyDeviceToHost));
    }
    unsigned long long total = 0;
    KL_CUDA(cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost));
    return total ^ tail;
}

/** Fills `count` ints with values in [-span, span] from the seed (the grader's, per repetition). */
inline void fillInts(int32_t* values, uint64_t count, uint64_t seed, int32_t span) {
    detail::fillKernel<<<1024, 256>>>(values, count, seed, span);
    KL_CHECK_LAUNCH();
}

namespace detail {

inline void reply(std::FILE* replies, const std::string& line) {
    std::fputs((line + "\n").c_str(), replies);
    std::fflush(replies);
}

// The seeds of the warm-up calls: the program's own, never timed or checked.
constexpr uint64_t kWarmupSeed = 0x5eed0000;

}  // namespace detail

/** Serves the grader's repetitions of one case at one size until it says `next` (see above). */
inline void serveCase(GraderCommands& commands, std::FILE* replies, const std::string& name, uint64_t size, SpeedCase& timed,
                      uint32_t warmup, DeviceBuffer<char>& flush) {
    for (uint32_t i = 0; i < warmup; i++) {
        timed.prepare(detail::kWarmupSeed + i);
        timed.run();
    }
    KL_CHECK_LAUNCH();
    char ready[256];
    std::snprintf(ready, sizeof ready, "ready %s %llu %.0f", name.c_str(), (unsigned long long)size, timed.bytes);
    detail::reply(replies, ready);
    for (uint32_t repetition = 0;; repetition++) {
        KL_CUDA(cudaMemsetAsync(flush.data(), int(repetition & 0xff), flush.size()));
        KL_CUDA(cudaDeviceSynchronize());
        detail::reply(replies, "armed");
        const std::string order = commands.next();
        const bool call = order.rfind("time ", 0) == 0;
        if (!call && order.rfind("overhead ", 0) != 0) {
            if (order == "next") { return; }
            throw std::runtime_error("the grader's command '" + order + "' is none of time, overhead, next");
        }
        timed.prepare(std::strtoull(order.c_str() + order.find(' ') + 1, nullptr, 10));
        if (call) { timed.run(); }
        KL_CUDA(cudaDeviceSynchronize());
        KL_CUDA(cudaGetLastError());
        char done[64];
        std::snprintf(done, sizeof done, "done %016llx", (unsigned long long)timed.digest());
        detail::reply(replies, done);
    }
}

/** The main of a speed program: serves every named case at every size, as the grader says. */
inline int speedMain(int argc, char* argv[], const std::map<std::string, SpeedCaseMaker>& cases) {
    std::map<std::string, std::string> options{{"--warmup", "3"}, {"--wait", "spin"}};
    for (int i = 1; i + 1 < argc; i += 2) { options[argv[i]] = argv[i + 1]; }
    if (!options.count("--cases") || !options.count("--sizes") || !options.count("--commands") || !options.count("--replies")) {
        std::fprintf(stderr, "usage: %s --cases A,B --sizes N,M --commands FD --replies FD [--warmup W] [--wait spin|sleep]\n"
                             "(run by the grader, which times the cases; `kernellab test` prints a table)\ncases:", argv[0]);
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
    const uint32_t warmup = uint32_t(std::strtoul(options["--warmup"].c_str(), nullptr, 10));
    GraderCommands commands(std::atoi(options["--commands"].c_str()), options["--wait"] != "sleep");
    std::FILE* replies = fdopen(std::atoi(options["--replies"].c_str()), "w");
    if (!commands.open() || replies == nullptr) {
        std::fprintf(stderr, "the grader's pipes (--commands, --replies) are not open\n");
        return 2;
    }
    // The device too is waited for awake (CUDA's default only while a process has fewer contexts
    // than the machine has cores); a program that made its context before this keeps its own.
    if (cudaSetDeviceFlags(cudaDeviceScheduleSpin) != cudaSuccess) { (void)cudaGetLastError(); }
    int device = 0, l2_bytes = 0;
    KL_CUDA(cudaGetDevice(&device));
    KL_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    DeviceBuffer<char> flush(2 * size_t(l2_bytes));
    detail::digestSum();
    detail::reply(replies, "started");
    for (std::string order = commands.nextAsleep(); !order.empty() && order != "end"; order = commands.nextAsleep()) {
        const std::vector<std::string> served =
            order.rfind("serve ", 0) == 0 ? detail::splitComma(order.substr(6)) : std::vector<std::string>{};
        const auto unknown = [&names](const std::string& name) { return std::find(names.begin(), names.end(), name) == names.end(); };
        if (served.empty() || std::any_of(served.begin(), served.end(), unknown)) {
            throw std::runtime_error("the grader's command '" + order + "' is no pass of this program's cases");
        }
        for (const std::string& size_text : detail::splitComma(options["--sizes"])) {
            const uint64_t size = std::strtoull(size_text.c_str(), nullptr, 10);
            for (const std::string& name : served) {
                SpeedCase timed = cases.at(name)(size);  // its buffers are freed before the next case's are made
                serveCase(commands, replies, name, size, timed, warmup, flush);
            }
        }
        detail::reply(replies, "finished");
    }
    return 0;
}

}  // namespace kernellab
