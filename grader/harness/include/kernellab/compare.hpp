// Comparing a device result with its host model: a failure names the first bad index, the
// block, warp and lane that produced it, and both values, so the student knows where to look.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>
#include "kernellab/catch.hpp"

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

}  // namespace kernellab

/** Fails the test with the first mismatch, if any. */
#define KL_REQUIRE_EQUAL(device, host, equals, layout)                                       \
    do {                                                                                      \
        const std::string kl_mismatch = ::kernellab::describeMismatch(device, host, equals, layout); \
        if (!kl_mismatch.empty()) { FAIL(kl_mismatch); }                                      \
    } while (0)
