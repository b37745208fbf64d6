// What the scan-lookback tests share: the solution under test, inputs per operator whose every
// order of evaluation gives the same exact result, the sequential host models, and the pieces of
// the status tests (a value type whose stores are slow, a bounded wait).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "kernellab_solution.h"  // generated: the solution's scanLookback.cu.h under its own name
#include "kernellab/catch.hpp"
#include "kernellab/compare.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"
#include "kernellab/record.hpp"

/** The judge shows an Mssp state as its four ints (record.hpp). */
template<>
struct kernellab::RecordFormat<MyInt4> {
    static std::string name() { return "int32x4"; }
};

inline std::ostream& operator<<(std::ostream& out, const MyInt4& v) {
    return out << "(" << v.x << ", " << v.y << ", " << v.z << ", " << v.w << ")";
}

namespace lookback {

/** Element equality under `OP::equals`, as a callable for the comparisons. */
template<class OP>
struct Equals {
    bool operator()(typename OP::RedElTp a, typename OP::RedElTp b) const { return OP::equals(a, b); }
};

/**
 * Random inputs per operator. Add<float> takes multiples of 1/8 in [-2, 2]: every partial sum of up
 * to 2^21 of them is a multiple of 1/8 below 2^22 in magnitude, which float holds exactly (24
 * bits), so every order of evaluation rounds nothing and the comparison is exact: the rounding
 * bound is 0. Mssp's range makes segments of every length.
 */
template<class OP> struct Inputs;
template<> struct Inputs<Add<int>> {
    static std::vector<int> make(size_t n, uint64_t seed) { return kernellab::randomInts(n, seed, -1000, 1000); }
};
template<> struct Inputs<Add<float>> {
    static std::vector<float> make(size_t n, uint64_t seed) {
        std::vector<float> values;
        values.reserve(n);
        for (int eighths : kernellab::randomInts(n, seed, -16, 16)) { values.push_back(float(eighths) / 8.0f); }
        return values;
    }
};
template<> struct Inputs<Mssp> {
    static std::vector<int> make(size_t n, uint64_t seed) { return kernellab::randomInts(n, seed, -20, 20); }
};

/** Inclusive scan of `mapFun` of `inputs`, in index order. */
template<class OP>
std::vector<typename OP::RedElTp> scanModel(const std::vector<typename OP::InpElTp>& inputs) {
    std::vector<typename OP::RedElTp> out;
    out.reserve(inputs.size());
    typename OP::RedElTp acc = OP::identity();
    for (const auto& el : inputs) {
        acc = OP::apply(acc, OP::mapFun(el));
        out.push_back(acc);
    }
    return out;
}

/** Status arrays for `tiles` tiles in one device allocation, the values poisoned. */
template<class OP>
struct DeviceStatus {
    explicit DeviceStatus(uint32_t tiles) : flags(tiles), aggregates(tiles), prefixes(tiles) {
        KL_CUDA(cudaMemset(flags.data(), 0, tiles * sizeof(uint32_t)));
    }
    TileStatus<OP> view() const { return TileStatus<OP>{flags.data(), aggregates.data(), prefixes.data()}; }
    kernellab::DeviceBuffer<uint32_t> flags;
    kernellab::DeviceBuffer<typename OP::RedElTp> aggregates;
    kernellab::DeviceBuffer<typename OP::RedElTp> prefixes;
};

/** Waits about `ticks` of clock64 (nanoseconds on the CPU backend, cycles on a GPU). */
__device__ inline void pauseTicks(long long ticks) {
    const long long start = clock64();
    while (clock64() - start < ticks) {}
}

/**
 * An int whose stores into a volatile element (the status values) take about 40 ms: a block that
 * reads the value as soon as it sees a flag published before the value, or reads the value before
 * waiting for the flag, reads what the memory held before, on every run.
 */
struct SlowInt {
    int value;
    SlowInt() = default;
    __host__ __device__ explicit SlowInt(int v) : value(v) {}
    __host__ __device__ SlowInt(const volatile SlowInt& other) : value(other.value) {}
    __host__ __device__ SlowInt(const SlowInt& other) : value(other.value) {}
    __host__ __device__ SlowInt& operator=(const SlowInt& other) {
        value = other.value;
        return *this;
    }
    __device__ void operator=(const SlowInt& other) volatile {
        pauseTicks(40000000);
        value = other.value;
    }
};

/** Add over SlowInt: the operator of the status tests. */
struct SlowAdd {
    typedef int InpElTp;
    typedef SlowInt RedElTp;
    static const bool commutative = true;
    static __device__ __host__ inline SlowInt identity() { return SlowInt(0); }
    static __device__ __host__ inline SlowInt apply(const SlowInt a, const SlowInt b) { return SlowInt(a.value + b.value); }
    static __device__ __host__ inline SlowInt remVolatile(volatile SlowInt& t) { return SlowInt(t); }
};

/**
 * Waits for `*done` to become nonzero for about 4 s (in clock64 ticks of a CPU or a 2 GHz GPU); past
 * that the block it waits for is stuck for good, and a kernel cannot be stopped from outside:
 * on the CPU backend the test process ends with `why`, on a GPU the kernel traps.
 */
__device__ inline void awaitOrStop(const volatile uint32_t* done, const char* why) {
    const long long start = clock64();
    while (*done == 0) {
        if (clock64() - start > 4000000000ll) {
#ifdef KERNELLAB_CPU_BACKEND
            std::fprintf(stderr, "FAILED: %s\n", why);
            std::fflush(stderr);
            std::_Exit(1);
#else
            printf("FAILED: %s\n", why);
            __trap();
#endif
        }
    }
}

}  // namespace lookback
