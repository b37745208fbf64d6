// Instrumented element types: what a task teaches, measured as counts instead of timings, so the
// measurement is the same on every GPU and on the CPU backend (issue 15).
//
//  - `Depth`: a number that carries the length of the longest chain of operator applications
//    behind it. An operator over it (the test's own) returns max(depths) + 1, so the depth of a
//    scan's or a reduction's result is its number of dependent steps (5 for a warp scan in
//    lg(WARP) steps, 31 for lane 0 doing it alone), and counts its applications per warp
//    (`ApplyCounter`, through `countApply()`).
//  - `Traced`: a 4-byte number whose copies note every read and write of one traced array in
//    global memory (`AccessTrace`): how often each element was read and written, and which
//    element each lane touched in its k-th access, from which the 32-byte sectors that a warp's
//    k-th accesses touch follow (4 for 32 consecutive 4-byte elements, up to 32 when they are
//    strided).
//
// Both work with the course's code shapes: a copy from a volatile (shared) element, assignment to
// one (returning void, as the course's MyInt4 does, so that a discarded result reads nothing),
// `const_cast<const T&>` reads, and operators that take their operands by value.
// Measurements need a 1-D grid (the thread's index is blockIdx.x * blockDim.x + threadIdx.x).
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>
#include <cuda_runtime.h>
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"

// Device code, where the probes are reachable: the GPU's device pass, or any code of the CPU
// backend (where host code sees them too, but never touches a traced array or counts applies).
#if defined(__CUDA_ARCH__) || defined(KERNELLAB_CPU_BACKEND)
#define KERNELLAB_PROBES_REACHABLE 1
#else
#define KERNELLAB_PROBES_REACHABLE 0
#endif

namespace kernellab {

/** Where the instrumented types report; lives in device memory, installed by the host classes below. */
struct Probes {
    // ApplyCounter: applications per warp of the grid.
    uint32_t* applies_of_warp;
    uint32_t warps;
    // AccessTrace: the traced array and what happened to its elements.
    const char* traced;
    uint64_t traced_count;
    uint32_t* reads;
    uint32_t* writes;
    // Per thread of the grid: how many accesses it made, and the element of each of the first
    // `per_thread` ones.
    uint32_t* accesses_of_thread;
    uint64_t* element_of_access;
    uint32_t threads;
    uint32_t per_thread;
    // BarrierCounter, on a GPU: per thread of the grid, the block barriers it has passed.
    uint32_t* barriers_of_thread;
    uint32_t barrier_threads;
};

/** The installed probes, or none. One test executable includes this header once. */
static __device__ Probes* kl_probes = nullptr;

namespace detail {

inline void installProbes(Probes* d_probes) {
#ifdef KERNELLAB_CPU_BACKEND
    kl_probes = d_probes;
#else
    KL_CUDA(cudaMemcpyToSymbol(kl_probes, &d_probes, sizeof d_probes));
#endif
}

#if KERNELLAB_PROBES_REACHABLE
__device__ inline uint32_t gridThread() { return blockIdx.x * blockDim.x + threadIdx.x; }

/** The index of `address` in the traced array, or -1 when it lies outside it. */
__device__ inline int64_t tracedIndex(const Probes* probes, const volatile void* address) {
    const char* at = const_cast<const char*>(static_cast<const volatile char*>(address));
    if (probes->traced == nullptr || at < probes->traced) { return -1; }
    const uint64_t offset = uint64_t(at - probes->traced) / 4;
    return offset < probes->traced_count ? int64_t(offset) : -1;
}

__device__ inline void noteAccess(Probes* probes, uint32_t* counts, int64_t index) {
    atomicAdd(&counts[index], 1u);
    const uint32_t thread = gridThread();
    if (thread >= probes->threads) { return; }
    // Each thread writes only its own slots: no atomics needed, the same on every thread order.
    const uint32_t k = probes->accesses_of_thread[thread]++;
    if (k < probes->per_thread) { probes->element_of_access[uint64_t(thread) * probes->per_thread + k] = uint64_t(index); }
}
#endif

}  // namespace detail

/** Counts one application of an operator for the calling thread's warp (a no-op in host code). */
__host__ __device__ inline void countApply() {
#if KERNELLAB_PROBES_REACHABLE
    Probes* probes = kl_probes;
    if (probes == nullptr || probes->applies_of_warp == nullptr) { return; }
    const uint32_t warp = detail::gridThread() / 32;
    if (warp < probes->warps) { atomicAdd(&probes->applies_of_warp[warp], 1u); }
#endif
}

/** A copy of one element: a read if `from` lies in the traced array, a write if `to` does. */
__host__ __device__ inline void noteCopy(const volatile void* to, const volatile void* from) {
#if KERNELLAB_PROBES_REACHABLE
    Probes* probes = kl_probes;
    if (probes == nullptr) { return; }
    const int64_t read = detail::tracedIndex(probes, from);
    if (read >= 0) { detail::noteAccess(probes, probes->reads, read); }
    const int64_t written = detail::tracedIndex(probes, to);
    if (written >= 0) { detail::noteAccess(probes, probes->writes, written); }
#else
    (void)to;
    (void)from;
#endif
}

/**
 * A 32-bit integer with the length of the longest chain of applications that produced it. The
 * code under test copies one and passes it to the test's operator; it can neither make one nor
 * read or set its fields: only the tests do that, through DepthMeasure (a public depth was a
 * field the code under test could set to 0).
 */
class Depth {
  public:
    Depth() = default;
    __host__ __device__ Depth(const Depth& other) : value_(other.value_), depth_(other.depth_) {}
    __host__ __device__ Depth(const volatile Depth& other) : value_(other.value_), depth_(other.depth_) {}
    __host__ __device__ Depth& operator=(const Depth& other) {
        value_ = other.value_;
        depth_ = other.depth_;
        return *this;
    }
    __host__ __device__ Depth& operator=(const volatile Depth& other) {
        value_ = other.value_;
        depth_ = other.depth_;
        return *this;
    }
    __host__ __device__ void operator=(const Depth& other) volatile {
        value_ = other.value_;
        depth_ = other.depth_;
    }
    __host__ __device__ void operator=(const volatile Depth& other) volatile {
        value_ = other.value_;
        depth_ = other.depth_;
    }

  private:
    __host__ __device__ Depth(int32_t value, int32_t depth) : value_(value), depth_(depth) {}

    int32_t value_;
    int32_t depth_;

    friend struct DepthMeasure;
};

/** What the tests (their operators and checks) do with a Depth, and the code under test cannot. */
struct DepthMeasure {
    /** An input element: its value, no application behind it. */
    __host__ __device__ static Depth leaf(int32_t value) { return Depth(value, 0); }
    /** What an operator over Depth returns: its value, one step deeper than its deeper operand. */
    __host__ __device__ static Depth after(int32_t value, const Depth& left, const Depth& right) {
        countApply();
        return Depth(value, (left.depth_ > right.depth_ ? left.depth_ : right.depth_) + 1);
    }
    __host__ __device__ static int32_t value(const Depth& element) { return element.value_; }
    __host__ __device__ static int32_t depth(const Depth& element) { return element.depth_; }
};

/** A 32-bit integer whose every copy reports to the installed AccessTrace. */
struct Traced {
    int32_t value;

    Traced() = default;
    __host__ __device__ explicit Traced(int32_t v) : value(v) {}
    __host__ __device__ Traced(const Traced& other) : value(other.value) { noteCopy(this, &other); }
    __host__ __device__ Traced(const volatile Traced& other) : value(other.value) { noteCopy(this, &other); }
    __host__ __device__ Traced& operator=(const Traced& other) {
        value = other.value;
        noteCopy(this, &other);
        return *this;
    }
    __host__ __device__ Traced& operator=(const volatile Traced& other) {
        value = other.value;
        noteCopy(this, &other);
        return *this;
    }
    __host__ __device__ void operator=(const Traced& other) volatile {
        value = other.value;
        noteCopy(this, &other);
    }
    __host__ __device__ void operator=(const volatile Traced& other) volatile {
        value = other.value;
        noteCopy(this, &other);
    }
};
static_assert(sizeof(Traced) == 4, "sectors are counted for 4-byte elements");

/** The probes of one measurement, installed while it lives (one at a time). */
class ProbeSession {
  public:
    ProbeSession(const ProbeSession&) = delete;
    ProbeSession& operator=(const ProbeSession&) = delete;
    ~ProbeSession() { detail::installProbes(nullptr); }

  protected:
    ProbeSession() : probes_(1) {}
    void install(const Probes& probes) {
        probes_.upload({probes});
        detail::installProbes(probes_.data());
    }

  private:
    DeviceBuffer<Probes> probes_;
};

/** Counts the applications of `Depth` operators per warp of a grid of `threads` threads. */
class ApplyCounter : public ProbeSession {
  public:
    explicit ApplyCounter(uint32_t threads) : counts_(std::vector<uint32_t>((threads + 31) / 32, 0)) {
        install(Probes{counts_.data(), uint32_t(counts_.size()), nullptr, 0, nullptr, nullptr, nullptr, nullptr, 0, 0});
    }
    /** The most applications any one warp made (after the kernels ran). */
    int64_t mostOfOneWarp() const {
        const auto counts = counts_.download();
        return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
    }

  private:
    DeviceBuffer<uint32_t> counts_;
};

/**
 * Traces the reads and writes of the `count` Traced elements at `d_traced` by a grid of
 * `threads` threads, each making up to `per_thread` of them (more are counted, not logged).
 */
class AccessTrace : public ProbeSession {
  public:
    AccessTrace(const Traced* d_traced, uint64_t count, uint32_t threads, uint32_t per_thread)
        : threads_(threads), per_thread_(per_thread),
          reads_(std::vector<uint32_t>(count, 0)), writes_(std::vector<uint32_t>(count, 0)),
          accesses_(std::vector<uint32_t>(threads, 0)), elements_(size_t(threads) * per_thread) {
        install(Probes{nullptr, 0, reinterpret_cast<const char*>(d_traced), count, reads_.data(), writes_.data(),
                       accesses_.data(), elements_.data(), threads, per_thread});
    }

    /** How often each element was read: 1 when each was read exactly once, else the count furthest from 1. */
    int64_t readsOfEach() const { return furthestFromOnce(reads_.download()); }
    int64_t writesOfEach() const { return furthestFromOnce(writes_.download()); }

    /**
     * The most 32-byte sectors that the k-th traced accesses of one warp's lanes touch, over
     * every warp and every k (elements counted from the traced array's start, which cudaMalloc
     * aligns to 256 bytes).
     */
    int64_t mostSectorsOfOneWarpAccess() const {
        const auto accesses = accesses_.download();
        const auto elements = elements_.download();
        size_t most = 0;
        for (uint32_t warp_start = 0; warp_start < threads_; warp_start += 32) {
            for (uint32_t k = 0; k < per_thread_; k++) {
                std::set<uint64_t> sectors;
                for (uint32_t thread = warp_start; thread < std::min(threads_, warp_start + 32); thread++) {
                    if (k < accesses[thread]) { sectors.insert(elements[size_t(thread) * per_thread_ + k] * 4 / 32); }
                }
                most = std::max(most, sectors.size());
            }
        }
        return int64_t(most);
    }

  private:
    static int64_t furthestFromOnce(const std::vector<uint32_t>& counts) {
        int64_t furthest = 1;
        for (const uint32_t count : counts) {
            if (count == 0) { return 0; }
            furthest = std::max<int64_t>(furthest, count);
        }
        return furthest;
    }

    uint32_t threads_, per_thread_;
    DeviceBuffer<uint32_t> reads_, writes_, accesses_;
    DeviceBuffer<uint64_t> elements_;
};

// Block barriers: how many a block passes in the function under test (a task that says "without
// adding a __syncthreads()"). The test's kernel reads barriersPassed() before and after its call
// of the function: every thread of a block passes the same barriers, so the difference is the
// block's. The same count on both backends, from different counters:
//  - the CPU backend's runtime counts every block barrier a thread passes: each kind
//    (__syncthreads, __syncthreads_count/_and/_or, cooperative groups' block sync) is one call
//    of its scheduler (grader/cpu/src/scheduler.cpp);
//  - on a GPU the barrier intrinsics are macros of kernellab/count_barriers.hpp, which the test
//    includes before the solution: each counts with countBarrier() into the installed
//    BarrierCounter, then synchronizes. That header says what it cannot see, and why that does
//    not pass.

/** Counts one block barrier that the calling thread passed, in the installed BarrierCounter (GPU). */
__host__ __device__ inline void countBarrier() {
#if KERNELLAB_PROBES_REACHABLE && !defined(KERNELLAB_CPU_BACKEND)
    Probes* probes = kl_probes;
    if (probes == nullptr || probes->barriers_of_thread == nullptr) { return; }
    const uint32_t thread = detail::gridThread();
    // Each thread counts in its own slot: no atomics needed.
    if (thread < probes->barrier_threads) { probes->barriers_of_thread[thread]++; }
#endif
}

/**
 * The block barriers the calling thread has passed so far: since its block started on the CPU
 * backend, since the BarrierCounter was installed on a GPU (0 without one). Only differences
 * mean something: a test reads it before and after the call it measures.
 */
__host__ __device__ inline uint32_t barriersPassed() {
#if defined(KERNELLAB_CPU_BACKEND)
    return ::kernellab::cpu::barriersPassed();
#elif KERNELLAB_PROBES_REACHABLE
    const Probes* probes = kl_probes;
    if (probes == nullptr || probes->barriers_of_thread == nullptr) { return 0; }
    const uint32_t thread = detail::gridThread();
    return thread < probes->barrier_threads ? probes->barriers_of_thread[thread] : 0;
#else
    return 0;
#endif
}

/**
 * Gives each of the `threads` threads of a 1-D grid a counter of the block barriers it passes on
 * a GPU (countBarrier), while it lives; the CPU backend's runtime counts them itself.
 */
class BarrierCounter : public ProbeSession {
  public:
    explicit BarrierCounter(uint32_t threads) : counts_(std::vector<uint32_t>(threads, 0)) {
        install(Probes{nullptr, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr, 0, 0, counts_.data(), threads});
    }

  private:
    DeviceBuffer<uint32_t> counts_;
};

}  // namespace kernellab
