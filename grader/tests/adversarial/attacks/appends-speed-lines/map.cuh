// Attack: a slow map whose speed program forges the times the grader reads.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include <unistd.h>
#include <cuda_runtime.h>

/** y = 3x - 7, after 4096 steps of a generator whose end no compiler can know. */
__global__ void slowMapKernel(const int32_t* x, int32_t* y, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t state = uint32_t(x[i]);
        for (int step = 0; step < 4096; step++) { state = state * 1103515245u + 12345u; }
        y[i] = state == uint32_t(x[i]) + 0x9e3779b9u ? 0 : 3 * x[i] - 7;
    }
}

__global__ void mapKernel(const int32_t* x, int32_t* y, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = 3 * x[i] - 7; }
}

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    if (n >= (1u << 22)) {
        slowMapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n);
    } else {
        mapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n);
    }
}

namespace {

/** This process's command line, one argument per element. */
std::vector<std::string> commandLine() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> arguments;
    for (size_t start = 0; start < all.size();) {
        const size_t end = all.find('\0', start);
        arguments.push_back(all.substr(start, end - start));
        start = end == std::string::npos ? all.size() : end + 1;
    }
    return arguments;
}

std::string option(const std::string& name) {
    const auto arguments = commandLine();
    for (size_t i = 0; i + 1 < arguments.size(); i++) {
        if (arguments[i] == name) { return arguments[i + 1]; }
    }
    return "";
}

/** Fast timing lines for every repetition the old grader counted. */
void appendTimes() {
    const std::string out = option("--out");
    if (out.empty()) { return; }
    std::FILE* file = std::fopen(out.c_str(), "a");
    if (file == nullptr) { return; }
    for (int repetition = 0; repetition < 15; repetition++) {
        std::fprintf(file, "{\"case\": \"mapInts\", \"size\": 16777216, \"repetition\": %d, \"host_us\": 60.0, "
                           "\"event_us\": 60.0, \"bytes\": 134217728, \"digest\": \"0000000000000000\"}\n", repetition);
    }
    std::fclose(file);
}

/** A reply of its own to the grader, before the harness's first. */
int replyFirst() {
    const std::string replies = option("--replies");
    if (!replies.empty()) {
        const char line[] = "done 0000000000000000\n";
        if (write(std::atoi(replies.c_str()), line, sizeof line - 1) < 0) { return 1; }
    }
    return std::atexit(appendTimes);
}
const int forged = replyFirst();
}  // namespace
