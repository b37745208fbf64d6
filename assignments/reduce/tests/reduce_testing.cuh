// What the reduce tests share: the solution under test, inputs per operator, host models written
// independently of the solution's operators, and the checks every rung runs: exact results for
// integer operators and small-integer floats, and float sums within the error bound of the rung's
// summation tree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <cstring>
#include <vector>

#include "kernellab_solution.h"  // generated: the solution's reduce_host.cuh under its own name
#include "kernellab/catch.hpp"
#include "kernellab/compare.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"
#include "kernellab/jitter.hpp"
#include "kernellab/property.hpp"

/** `OP` with random pauses before each `apply`, so that a missing barrier shows up as a wrong result. */
template<class OP>
struct Jitter : OP {
    typedef typename OP::Elem Elem;
    static __device__ __host__ inline Elem apply(const Elem a, const Elem b) {
        kernellab::jitterPause();
        return OP::apply(a, b);
    }
};

inline std::ostream& operator<<(std::ostream& out, const Mat2& m) {
    return out << "[[" << m.a << ", " << m.b << "], [" << m.c << ", " << m.d << "]]";
}

namespace reduce_test {

/** A host wrapper of the ladder, e.g. `reduceCompact<Add<int32_t>>`. */
template<class OP>
using Reducer = void (*)(uint32_t, uint64_t, typename OP::Elem*, const typename OP::Elem*, typename OP::Elem*);

/**
 * Random inputs and the sequential host model of each operator. The inputs make every order of
 * evaluation give the same exact result: small integers for the sums (float sums of them are
 * exact below 2^24), any integers for the others (MatMul wraps around modulo 2^32).
 */
template<class OP> struct Model;
template<> struct Model<Add<int32_t>> {
    static std::vector<int32_t> inputs(size_t n, uint64_t seed) { return kernellab::randomInts(n, seed, -9, 9); }
    static int32_t reduce(const std::vector<int32_t>& xs) {
        int64_t sum = 0;
        for (int32_t x : xs) { sum += x; }
        return int32_t(sum);
    }
};
template<> struct Model<Add<float>> {
    static std::vector<float> inputs(size_t n, uint64_t seed) {
        const auto ints = kernellab::randomInts(n, seed, -4, 4);
        return std::vector<float>(ints.begin(), ints.end());
    }
    static float reduce(const std::vector<float>& xs) {
        double sum = 0;
        for (float x : xs) { sum += x; }
        return float(sum);
    }
};
template<> struct Model<Max<int32_t>> {
    static std::vector<int32_t> inputs(size_t n, uint64_t seed) {
        return kernellab::randomInts(n, seed, -1000000000, 1000000000);
    }
    static int32_t reduce(const std::vector<int32_t>& xs) { return *std::max_element(xs.begin(), xs.end()); }
};
template<> struct Model<Min<int32_t>> {
    static std::vector<int32_t> inputs(size_t n, uint64_t seed) { return Model<Max<int32_t>>::inputs(n, seed); }
    static int32_t reduce(const std::vector<int32_t>& xs) { return *std::min_element(xs.begin(), xs.end()); }
};
template<> struct Model<MatMul> {
    static std::vector<Mat2> inputs(size_t n, uint64_t seed) {
        std::mt19937_64 gen(kernellab::generatorSeed(seed));
        std::vector<Mat2> xs(n);
        for (auto& m : xs) { m = Mat2{uint32_t(gen()), uint32_t(gen()), uint32_t(gen()), uint32_t(gen())}; }
        return xs;
    }
    static Mat2 reduce(const std::vector<Mat2>& xs) {
        uint32_t a = 1, b = 0, c = 0, d = 1;
        for (const Mat2& m : xs) {
            const uint32_t na = a * m.a + b * m.c, nb = a * m.b + b * m.d;
            const uint32_t nc = c * m.a + d * m.c, nd = c * m.b + d * m.d;
            a = na; b = nb; c = nc; d = nd;
        }
        return Mat2{a, b, c, d};
    }
};
template<class OP> struct Model<Jitter<OP>> : Model<OP> {};

/** Bitwise equality, for every element type (the exact inputs leave no room for rounding). */
struct SameBits {
    template<class T>
    bool operator()(const T& a, const T& b) const { return std::memcmp(&a, &b, sizeof(T)) == 0; }
};

/** Elements past the end of the input, poisoned, so that a read past `n` changes the result. */
constexpr size_t kPoisonedTail = 64;

/**
 * Runs `reduce` (the wrapper named `wrapper`) on `input` with `block` threads per block, the input
 * starting `offset` elements into its device buffer, and returns `*d_out`. Scratch and output
 * start poisoned. Records the bytes the wrapper copied to the host (property "bytes-to-host").
 */
template<class OP>
typename OP::Elem runOnDevice(const char* wrapper, Reducer<OP> reduce, const std::vector<typename OP::Elem>& input,
                              uint32_t block, size_t offset = 0) {
    typedef typename OP::Elem T;
    std::vector<T> padded(offset, kernellab::poisonValue<T>());
    padded.insert(padded.end(), input.begin(), input.end());
    padded.insert(padded.end(), kPoisonedTail, kernellab::poisonValue<T>());
    kernellab::DeviceBuffer<T> d_in(padded), d_out(1), d_scratch(reduceScratchElems(input.size()));
    kernellab::recordBytesToHost(wrapper, [&] {
        reduce(block, input.size(), d_out.data(), d_in.data() + offset, d_scratch.data());
    });
    KL_CHECK_LAUNCH();
    return d_out.download()[0];
}

/** `reduce` on the exact inputs of OP equals the host model. */
template<class OP>
void checkExact(const char* wrapper, Reducer<OP> reduce, uint64_t n, uint32_t block, uint64_t seed, size_t offset = 0) {
    const auto input = Model<OP>::inputs(n, seed);
    const std::vector<typename OP::Elem> result{runOnDevice<OP>(wrapper, reduce, input, block, offset)};
    const auto expected = [&] { return std::vector<typename OP::Elem>{Model<OP>::reduce(input)}; };
    KL_REQUIRE_EQUAL(result, expected(), SameBits{}, kernellab::Layout{});
}

/**
 * `reduce` on random floats from [lo, hi) is within the rounding-error bound of a summation tree
 * of height `height` of the float64 sum.
 */
inline void checkFloatSum(const char* wrapper, Reducer<Add<float>> reduce, uint64_t n, uint32_t block, uint64_t seed,
                          uint64_t height, float lo, float hi) {
    const auto input = kernellab::randomFloats(n, seed, lo, hi);
    const std::vector<float> result{runOnDevice<Add<float>>(wrapper, reduce, input, block)};
    // Evaluated only where a verdict or the reference's records are made (compare.hpp).
    const auto exact = [&] {
        double sum = 0;
        for (float x : input) { sum += x; }
        return std::vector<double>{sum};
    };
    KL_REQUIRE_CLOSE(result, exact(), std::vector<double>{kernellab::summationErrorBound(input, height)},
                     kernellab::Layout{});
}

inline uint32_t log2Of(uint64_t power_of_two) {
    uint32_t log = 0;
    while ((uint64_t(1) << log) < power_of_two) { log++; }
    return log;
}

/**
 * The height of the summation tree of the block-per-segment rungs: each pass reduces segments of
 * `segment` elements in lg(segment) levels, and passes follow until one value is left.
 */
inline uint64_t segmentPassesHeight(uint64_t n, uint32_t segment) {
    uint64_t height = 0;
    do {
        n = (n + segment - 1) / segment;
        height += log2Of(segment);
    } while (n > 1);
    return height;
}

}  // namespace reduce_test

/**
 * The checks of a block-per-segment rung (SEGMENT: its segment size for a block of `block`
 * threads): every operator on every hostile size and block size, and float sums of random
 * values, signed and positive, within the bound of its tree. One test case each, named after
 * the wrapper.
 */
#define REDUCE_SEGMENT_RUNG_TESTS(WRAPPER, TAG, SEGMENT, ...)                                        \
    TEMPLATE_TEST_CASE(#WRAPPER " reduces every size with every block size", TAG, __VA_ARGS__) {     \
        typedef TestType OP;                                                                         \
        const uint32_t n = GENERATE(from_range(kernellab::hostileSizes()));                          \
        const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));                        \
        const uint64_t seed = 100 + n;                                                               \
        KL_CAPTURE(n, block, seed);                                                                  \
        reduce_test::checkExact<OP>(#WRAPPER, WRAPPER<OP>, n, block, seed);                          \
    }                                                                                                \
    TEST_CASE(#WRAPPER " sums random floats within the error bound of its tree", TAG) {              \
        const uint32_t n = GENERATE(from_range(kernellab::hostileSizes()));                          \
        const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));                        \
        const float lo = GENERATE(-1.0f, 0.5f);                                                      \
        const uint64_t seed = 200 + n, height = reduce_test::segmentPassesHeight(n, SEGMENT);        \
        KL_CAPTURE(n, block, lo, seed, height);                                                      \
        reduce_test::checkFloatSum(#WRAPPER, WRAPPER<Add<float>>, n, block, seed, height, lo, 1.0f); \
    }
