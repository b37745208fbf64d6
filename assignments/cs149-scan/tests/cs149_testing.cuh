// What the tests of cs149-scan share: the arrays the course's wrappers (cudaScan,
// cudaFindRepeats) hand the student's functions, the host models, and the inputs.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernellab_solution.h"  // generated: the student's scan.cu
#include "kernellab/catch.hpp"
#include "kernellab/compare.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"
#include "kernellab/launched_threads.hpp"
#include "kernellab/property.hpp"

namespace cs149 {

/** The course's largest size (checker.py times 1M, 10M, 20M and 40M elements). */
constexpr uint32_t kCourseSize = 40000000;

/**
 * The threads exclusive_scan may launch, in percent of the iterations of the up-sweep's and the
 * down-sweep's inner loops (the manifest's bound of property "threads-launched"): one thread per
 * iteration, with the small steps rounded up to whole blocks, is about 100; N threads at every
 * step, about 100 lg N.
 */
constexpr int64_t kMostThreadsPercent = 200;

/** Elements after the buffer cudaScan allocates: they stay poisoned unless code writes past it. */
constexpr uint32_t kTail = 1024;

/**
 * The sizes of the tests: the harness's hostile sizes (the grader's hidden ones in its runs),
 * and, in the public runs, the course's smallest arrays too, where the rounded buffer is 2 or 4.
 */
inline std::vector<uint32_t> sizes() {
    auto sizes = kernellab::hostileSizes();
    if (std::getenv("KERNELLAB_SIZES") == nullptr) { sizes.insert(sizes.begin() + 1, {2, 3}); }
    return sizes;
}

/** The course's nextPow2: the length of the arrays its wrappers allocate for n elements. */
inline uint32_t rounded(uint32_t n) {
    uint32_t length = 1;
    while (length < n) { length *= 2; }
    return length;
}

/**
 * Random ints whose every prefix sum fits an int at this size: the course's checker uses 0..9,
 * these are signed too, so a scan that drops or repeats an element cannot sum to the same value.
 */
inline std::vector<int> randomInput(uint32_t n, uint64_t seed) {
    const int32_t limit = int32_t(std::min<int64_t>(1000, INT_MAX / int64_t(n)));
    return kernellab::randomInts(n, seed, -limit, limit);
}

/** The course's other input: every element 1 (`./cudaScan -i ones`). */
inline std::vector<int> ones(uint32_t n) { return std::vector<int>(n, 1); }

/** nextPow2(n) ints, as the course's wrappers allocate for n elements, then kTail ints past them. */
inline size_t courseArrayLength(uint32_t n) { return rounded(n) + kTail; }

/**
 * Fills a fresh (poisoned) buffer of courseArrayLength(values.size()) ints as the course's
 * wrappers do: the first n elements copied from `values`, the rest left as they were (poisoned
 * here; the course's are uninitialized), the kTail past the allocation for no correct code to touch.
 */
inline void copyToFront(kernellab::DeviceBuffer<int>& buffer, const std::vector<int>& values) {
    KL_CUDA(cudaMemcpy(buffer.data(), values.data(), values.size() * sizeof(int), cudaMemcpyHostToDevice));
}

/** The elements of `buffer` from `from` on, which start poisoned: what a write past the buffer shows in. */
inline std::vector<int> tailOf(const kernellab::DeviceBuffer<int>& buffer, uint32_t from) {
    const auto all = buffer.download();
    return std::vector<int>(all.begin() + from, all.end());
}

/** The first n elements of `buffer`. */
inline std::vector<int> frontOf(const kernellab::DeviceBuffer<int>& buffer, uint32_t n) {
    std::vector<int> front(n);
    KL_CUDA(cudaMemcpy(front.data(), buffer.data(), n * sizeof(int), cudaMemcpyDeviceToHost));
    return front;
}

inline std::vector<int> poisonedTail() { return std::vector<int>(kTail, kernellab::poisonValue<int>()); }

/** The sequential exclusive scan (the course's cpu_exclusive_scan). */
inline std::vector<int> exclusiveScanModel(const std::vector<int>& input) {
    std::vector<int> scanned(input.size());
    int sum = 0;
    for (size_t i = 0; i < input.size(); i++) {
        scanned[i] = sum;
        sum += input[i];
    }
    return scanned;
}

/** The count, then the indices i with input[i] == input[i+1] (the course's cpu_find_repeats). */
inline std::vector<int> findRepeatsModel(const std::vector<int>& input) {
    std::vector<int> found{0};
    for (size_t i = 0; i + 1 < input.size(); i++) {
        if (input[i] == input[i + 1]) { found.push_back(int(i)); }
    }
    found[0] = int(found.size() - 1);
    return found;
}

inline bool same(int device, int host) { return device == host; }

}  // namespace cs149
