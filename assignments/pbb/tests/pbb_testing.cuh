// What the pbb tests share: the solution under test, the extra operators, sequential host
// models of every operation, and inputs per operator. The host models use the solution's own
// operator classes; test_operators.cu checks those against independent definitions.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <vector>

#include "kernellab_solution.h"  // generated: the solution's hostSkel.cu.h under its own name
#include "kernellab/catch.hpp"
#include "kernellab/compare.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"

/** Maximum, a commutative operator whose identity is not zero. */
template<class T>
class Max {
  public:
    typedef T InpElTp;
    typedef T RedElTp;
    static const bool commutative = true;
    static constexpr T lowest = std::numeric_limits<T>::lowest();
    static __device__ __host__ inline T identInp()                    { return lowest; }
    static __device__ __host__ inline T mapFun(const T& el)           { return el; }
    static __device__ __host__ inline T identity()                    { return lowest; }
    static __device__ __host__ inline T apply(const T t1, const T t2) { return t1 > t2 ? t1 : t2; }
    static __device__ __host__ inline bool equals(const T t1, const T t2) { return t1 == t2; }
    static __device__ __host__ inline T remVolatile(volatile T& t)        { T res = t; return res; }
};

/**
 * `OP` with random pauses of up to a few microseconds before each `apply` and each read of a
 * shared element. Correctly synchronized code gives the same results under any delays; a race
 * between warps, which the GPU's usual timing hides, shows up as wrong results (the course's
 * scanIncBlock race at 1024 threads is caught this way).
 */
template<class OP>
class Jitter : public OP {
  public:
    typedef typename OP::RedElTp RedElTp;
    static __device__ __host__ inline RedElTp apply(const RedElTp t1, const RedElTp t2) {
        pause();
        return OP::apply(t1, t2);
    }
    static __device__ __host__ inline RedElTp remVolatile(volatile RedElTp& t) {
        pause();
        return OP::remVolatile(t);
    }

  private:
    static __device__ __host__ inline void pause() {
#ifdef __CUDA_ARCH__
        uint32_t h = (threadIdx.x + 1) * 0x9E3779B1u ^ (blockIdx.x + 1) * 0x85EBCA77u ^ uint32_t(clock64());
        h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12;
        if ((h & 7) == 0) { __nanosleep(256 + (h >> 20)); }
#endif
    }
};

/** The judge shows an Mssp state as its four ints (record.hpp). */
template<>
struct kernellab::RecordFormat<MyInt4> {
    static std::string name() { return "int32x4"; }
};

inline std::ostream& operator<<(std::ostream& out, const MyInt4& v) {
    return out << "(" << v.x << ", " << v.y << ", " << v.z << ", " << v.w << ")";
}
template<class T>
std::ostream& operator<<(std::ostream& out, const ValFlg<T>& vf) {
    return out << "{flag " << int(vf.f) << ", " << vf.v << "}";
}

namespace pbb {

/** Element equality under `OP::equals`, as a callable for the comparisons. */
template<class OP>
struct Equals {
    bool operator()(typename OP::RedElTp a, typename OP::RedElTp b) const { return OP::equals(a, b); }
};
struct FlagEquals {
    bool operator()(char a, char b) const { return a == b; }
};

/**
 * Random inputs per operator, chosen so that every order of evaluation gives the same exact
 * result: small integers (float sums of them are exact below 2^24), and for the sums a range
 * whose total stays far from overflow at the course's largest size.
 */
template<class OP> struct Inputs;
template<> struct Inputs<Add<int>> {
    static std::vector<int> make(size_t n, uint64_t seed) { return kernellab::randomInts(n, seed, -9, 9); }
};
template<> struct Inputs<Add<float>> {
    static std::vector<float> make(size_t n, uint64_t seed) {
        const auto ints = kernellab::randomInts(n, seed, -4, 4);
        return std::vector<float>(ints.begin(), ints.end());
    }
};
template<> struct Inputs<Max<int>> {
    static std::vector<int> make(size_t n, uint64_t seed) {
        return kernellab::randomInts(n, seed, -1000000000, 1000000000);
    }
};
template<> struct Inputs<Mssp> {
    static std::vector<int> make(size_t n, uint64_t seed) { return kernellab::randomInts(n, seed, -20, 20); }
};
template<class OP> struct Inputs<Jitter<OP>> : Inputs<OP> {};

/** `mapFun` of every input: what the warp- and block-level functions take. */
template<class OP>
std::vector<typename OP::RedElTp> mapAll(const std::vector<typename OP::InpElTp>& inputs) {
    std::vector<typename OP::RedElTp> mapped;
    mapped.reserve(inputs.size());
    for (auto el : inputs) { mapped.push_back(OP::mapFun(el)); }
    return mapped;
}

/** Inclusive scan of `values`, restarting every `period` elements (0: never). */
template<class OP>
std::vector<typename OP::RedElTp> scanModel(const std::vector<typename OP::RedElTp>& values, uint64_t period = 0) {
    std::vector<typename OP::RedElTp> out(values.size());
    typename OP::RedElTp acc = OP::identity();
    for (uint64_t i = 0; i < values.size(); i++) {
        if (period != 0 && i % period == 0) { acc = OP::identity(); }
        typename OP::RedElTp el = values[i];
        acc = OP::apply(acc, el);
        out[i] = acc;
    }
    return out;
}

/** Reduction of `values` in index order. */
template<class OP>
typename OP::RedElTp reduceModel(const std::vector<typename OP::RedElTp>& values) {
    typename OP::RedElTp acc = OP::identity();
    for (auto el : values) { acc = OP::apply(acc, el); }
    return acc;
}

/**
 * Segmented inclusive scan with `LiftOP<OP>`, restarting every `period` elements (0: never);
 * returns the pairs: `.v` the values, `.f` whether a segment started at or before the element.
 */
template<class OP>
std::vector<ValFlg<typename OP::RedElTp>> sgmScanModel(const std::vector<typename OP::RedElTp>& values,
                                                       const std::vector<char>& flags, uint64_t period = 0) {
    typedef ValFlg<typename OP::RedElTp> FVTup;
    std::vector<FVTup> out(values.size());
    FVTup acc = LiftOP<OP>::identity();
    for (uint64_t i = 0; i < values.size(); i++) {
        if (period != 0 && i % period == 0) { acc = LiftOP<OP>::identity(); }
        acc = LiftOP<OP>::apply(acc, FVTup(flags[i], values[i]));
        out[i] = acc;
    }
    return out;
}

template<class T>
std::vector<T> valuesOf(const std::vector<ValFlg<T>>& pairs) {
    std::vector<T> values;
    values.reserve(pairs.size());
    for (const auto& p : pairs) { values.push_back(p.v); }
    return values;
}

template<class T>
std::vector<char> flagsOf(const std::vector<ValFlg<T>>& pairs) {
    std::vector<char> flags;
    flags.reserve(pairs.size());
    for (const auto& p : pairs) { flags.push_back(p.f); }
    return flags;
}

/** Blocks of `block` threads that cover `n` elements, `per_thread` each. */
inline uint32_t blocksFor(uint64_t n, uint32_t block, uint32_t per_thread = 1) {
    return uint32_t((n + uint64_t(block) * per_thread - 1) / (uint64_t(block) * per_thread));
}

}  // namespace pbb
