// What the pbb tests share: the solution under test, the extra operators, sequential host
// models of every operation, and inputs per operator. The host models use the solution's own
// operator classes; test_operators.cu checks those against independent definitions.
//
// Everything here works with both operator APIs a solution may have: kernellab's (operators
// take const values, MyInt4 copies from volatile) and the PMPH course's (Mssp::apply takes
// non-const volatile references, MyInt4 has no copy from a volatile object, the host helpers
// have 2020-2023 or 2024-2025 names). What the course's code does not promise is decided in
// pbb_applicability.cuh.
//
// The tests call the solution's functions with kernellab::Stepped<OP> (kernellab/lockstep.hpp):
// `OP` on a GPU; on the CPU backend, where a task accepts the lockstep idiom, an `OP` whose
// applications keep a warp's lanes in step as in lockstep.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "pbb_applicability.cuh"  // and the solution, pbb_solution.cuh
#include "kernellab/catch.hpp"
#include "kernellab/compare.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"
#include "kernellab/jitter.hpp"
#include "kernellab/lockstep.hpp"
#include "kernellab/property.hpp"

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
 * scanIncBlock race at 1024 threads is caught this way). `apply` passes its arguments on as it
 * got them, so Jitter<OP> accepts exactly what OP accepts (the course's Mssp: only non-const
 * lvalues, volatile or not), and says so to overload resolution (pbb::Liftable sees it).
 */
template<class OP>
class Jitter : public OP {
  public:
    typedef typename OP::RedElTp RedElTp;
    template<class A, class B>
    static __device__ __host__ inline auto apply(A&& t1, B&& t2)
        -> decltype(OP::apply(static_cast<A&&>(t1), static_cast<B&&>(t2))) {
        kernellab::jitterPause();
        return OP::apply(static_cast<A&&>(t1), static_cast<B&&>(t2));
    }
    static __device__ __host__ inline RedElTp remVolatile(volatile RedElTp& t) {
        kernellab::jitterPause();
        return OP::remVolatile(t);
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

/**
 * Says why the current case is not run: it lies beyond what the solution's own code promises
 * (pbb_applicability.cuh). A warning, never a failure; the grader decides the same from its
 * probes and excludes the case by name, whatever a run says.
 */
inline void notApplicable(const std::string& why) { WARN("not applicable to this submission: " << why); }

/** Why blocks of `block` threads are beyond the solution's chunked host wrappers. */
inline std::string hostWrappersCannotLaunch(uint32_t block) {
    return "blocks of " + std::to_string(block) + " threads need " + std::to_string(courseChunkBytes(block))
           + " bytes of shared memory in this solution's host wrappers (ELEMS_PER_THREAD = "
           + std::to_string(ELEMS_PER_THREAD) + " words per thread), more than the "
           + std::to_string(kDefaultSharedMemoryBytes) + " a launch gets without opting in";
}

/** Why LiftOP<OP> cannot be tested with the solution's operators. */
constexpr const char* kNotLiftable =
    "LiftOP<Mssp> does not compile with this submission's Mssp (its apply and equals take non-const "
    "references): its segmented scan is for Add only";

/** Blocks of `block` threads that cover `n` elements, `per_thread` each. */
inline uint32_t blocksFor(uint64_t n, uint32_t block, uint32_t per_thread = 1) {
    return uint32_t((n + uint64_t(block) * per_thread - 1) / (uint64_t(block) * per_thread));
}

/** The smallest multiple of a warp that is at least `n`: the one-block kernels' block size. The
 * solutions' own helper has two names (closestMul32 until 2023, nextMul32 since). */
inline uint32_t warpMultiple(uint32_t n) { return blocksFor(n, 32) * 32; }

/** The course's array size (its Makefile's), the default of the hidden [large] cases: more blocks
 * than one block can scan unless the wrappers sequentialize, and indexes past 2^26. */
constexpr uint32_t kCourseSize = 100003565;

}  // namespace pbb
