// Comparing a device result with its host model: a failure names the first bad index, the
// block, warp and lane that produced it, and both values, so the student knows where to look.
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>
#include "kernellab/catch.hpp"
#include "kernellab/record.hpp"

namespace kernellab {

/**
 * How the elements of an array map to the threads that computed them: each block owns
 * `elems_per_block` consecutive elements, and within one pass over `block_size *
 * elems_per_thread` of them, each thread owns `elems_per_thread` consecutive ones.
 * A block size of 0 means the mapping is the code under test's own choice (host wrappers).
 */
struct Layout {
    uint32_t block_size = 0;
    uint64_t elems_per_block = 0;
    uint32_t elems_per_thread = 1;
};

/** "block 3, warp 5, lane 17 (thread 177)" for element `index`. */
inline std::string whereIs(uint64_t index, const Layout& layout) {
    if (layout.block_size == 0) { return "thread chosen by the host wrapper"; }
    const uint64_t block  = index / layout.elems_per_block;
    const uint64_t in_blk = index % layout.elems_per_block;
    const uint64_t thread = (in_blk % (uint64_t(layout.block_size) * layout.elems_per_thread))
                          / layout.elems_per_thread;
    std::ostringstream out;
    out << "block " << block << ", warp " << thread / 32 << ", lane " << thread % 32
        << " (thread " << thread << ")";
    return out.str();
}

template<class T>
std::string show(const T& value) {
    std::ostringstream out;
    out << value;
    return out.str();
}
inline std::string show(const char& value) { return std::to_string(int(value)); }

/**
 * Empty when `device` equals `host` element by element under `equals`; otherwise a message
 * with the first mismatch, where it came from, and how many elements differ.
 */
template<class T, class Equals>
std::string describeMismatch(const std::vector<T>& device, const std::vector<T>& host,
                             Equals equals, const Layout& layout) {
    if (device.size() != host.size()) {
        return "device result has " + std::to_string(device.size()) + " elements, host model "
               + std::to_string(host.size());
    }
    uint64_t first = device.size(), count = 0;
    for (uint64_t i = 0; i < device.size(); i++) {
        if (!equals(device[i], host[i])) {
            if (count == 0) { first = i; }
            count++;
        }
    }
    if (count == 0) { return ""; }
    std::ostringstream out;
    out << "first mismatch at index " << first << " (" << whereIs(first, layout) << "): device "
        << show(device[first]) << ", host " << show(host[first]) << "; " << count << " of "
        << device.size() << " elements differ";
    return out.str();
}

/**
 * A bound on the rounding error of any float32 summation of `values` whose tree has height
 * `height` (no value goes through more than `height` additions): gamma_h * sum |x_i|, with
 * gamma_h = h u / (1 - h u) and u = 2^-24 (Higham, Accuracy and Stability of Numerical
 * Algorithms, 2nd ed., section 4.2), plus the float64 reference sum's own bound.
 */
inline double summationErrorBound(const std::vector<float>& values, uint64_t height) {
    double magnitude = 0;
    for (float v : values) { magnitude += std::fabs(double(v)); }
    const double hu = double(height) * std::ldexp(1.0, -24);
    const double nu = double(values.size()) * std::ldexp(1.0, -53);
    return (hu / (1 - hu) + nu / (1 - nu)) * magnitude;
}

/**
 * Empty when every |device[i] - expected[i]| is at most bound[i]; otherwise a message with the
 * first element out of its bound, where it came from, the difference and the bound.
 */
template<class T>
std::string describeOutOfBound(const std::vector<T>& device, const std::vector<double>& expected,
                               const std::vector<double>& bound, const Layout& layout) {
    if (device.size() != expected.size() || bound.size() != expected.size()) {
        return "device result has " + std::to_string(device.size()) + " elements, host model "
               + std::to_string(expected.size()) + ", bounds " + std::to_string(bound.size());
    }
    uint64_t first = device.size(), count = 0;
    for (uint64_t i = 0; i < device.size(); i++) {
        // Written so that a NaN on the device is out of bound too.
        if (!(std::fabs(double(device[i]) - expected[i]) <= bound[i])) {
            if (count == 0) { first = i; }
            count++;
        }
    }
    if (count == 0) { return ""; }
    std::ostringstream out;
    out.precision(17);
    out << "first element out of bound at index " << first << " (" << whereIs(first, layout) << "): device "
        << double(device[first]) << ", host (float64) " << expected[first] << ", |difference| "
        << std::fabs(double(device[first]) - expected[first]) << " > bound " << bound[first] << "; " << count
        << " of " << device.size() << " elements out of bound";
    return out.str();
}

/** A graded build's record of a device result (record.hpp); the judge compares it. */
template<class T>
void recordDevice(const char* check, const std::vector<T>& device, bool whole, const Layout& layout) {
    recordArray(check, "device", device, whole, layoutJson(layout.block_size, layout.elems_per_block, layout.elems_per_thread));
}

/** The reference build's records of a check: the device result and the host model as the expected one. */
template<class T>
void recordEqual(const char* check, const std::vector<T>& device, const std::vector<T>& host, const Layout& layout) {
    recordDevice(check, device, false, layout);
    recordArray(check, "expected", host, false, layoutJson(layout.block_size, layout.elems_per_block, layout.elems_per_thread));
}

/** The reference build's records of a check within bounds: always whole arrays. */
template<class T>
void recordClose(const char* check, const std::vector<T>& device, const std::vector<double>& expected,
                 const std::vector<double>& bound, const Layout& layout) {
    const std::string where = layoutJson(layout.block_size, layout.elems_per_block, layout.elems_per_thread);
    recordDevice(check, device, true, layout);
    recordArray(check, "expected", expected, true, where);
    recordArray(check, "bound", bound, true, where);
}

}  // namespace kernellab

// The checks. Their expected (and bound) arguments are evaluated only where a verdict or an
// expected record is made: never in a student build run for grading (record.hpp), so no answer
// is computed in a process that runs student code. Write them as an expression or a lambda
// called there: KL_REQUIRE_EQUAL(d_out.download(), expected(), ...).

/** Fails the test with the first mismatch, if any; in a graded build records instead (record.hpp). */
#define KL_REQUIRE_EQUAL(device, host, equals, layout)                                        \
    do {                                                                                       \
        if constexpr (KERNELLAB_RECORD_ROLE == KERNELLAB_ROLE_STUDENT) {                       \
            ::kernellab::recordDevice(#device, device, false, layout);                         \
        } else if constexpr (KERNELLAB_RECORD_ROLE == KERNELLAB_ROLE_REFERENCE) {              \
            ::kernellab::recordEqual(#device, device, host, layout);                           \
        } else {                                                                               \
            const std::string kl_mismatch = ::kernellab::describeMismatch(device, host, equals, layout); \
            if (!kl_mismatch.empty()) { FAIL(kl_mismatch); }                                   \
        }                                                                                      \
    } while (0)

/** Fails the test with the first element farther from its float64 model than its bound, if any. */
#define KL_REQUIRE_CLOSE(device, expected, bound, layout)                                     \
    do {                                                                                       \
        if constexpr (KERNELLAB_RECORD_ROLE == KERNELLAB_ROLE_STUDENT) {                       \
            ::kernellab::recordDevice(#device, device, true, layout);                          \
        } else if constexpr (KERNELLAB_RECORD_ROLE == KERNELLAB_ROLE_REFERENCE) {              \
            ::kernellab::recordClose(#device, device, expected, bound, layout);                \
        } else {                                                                               \
            const std::string kl_out_of_bound = ::kernellab::describeOutOfBound(device, expected, bound, layout); \
            if (!kl_out_of_bound.empty()) { FAIL(kl_out_of_bound); }                           \
        }                                                                                      \
    } while (0)
