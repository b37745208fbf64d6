// Inputs for tests: seeded, random, never all zeros, and the sizes and block sizes that
// break index arithmetic (around warp and block multiples, powers of two, large primes).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace kernellab {

/**
 * The generator seed for a test's `seed`. The grader's hidden cases set KERNELLAB_SEED to a
 * secret drawn afresh on each grading run, so that their inputs cannot be known in advance;
 * without it (the public tests) every seed is used as it is.
 */
inline uint64_t generatorSeed(uint64_t seed) {
    static const uint64_t secret = [] {
        const char* text = std::getenv("KERNELLAB_SEED");
        return text != nullptr ? std::strtoull(text, nullptr, 10) : 0;
    }();
    if (secret == 0) { return seed; }
    uint64_t mixed = seed ^ secret;  // splitmix64's finalizer: nearby seeds give unrelated streams
    mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9ULL;
    mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111ebULL;
    return mixed ^ (mixed >> 31);
}

/** `n` integers drawn uniformly from [lo, hi] with the given seed, never all zero. */
inline std::vector<int32_t> randomInts(size_t n, uint64_t seed, int32_t lo, int32_t hi) {
    std::mt19937_64 gen(generatorSeed(seed));
    std::uniform_int_distribution<int32_t> dist(lo, hi);
    std::vector<int32_t> values(n);
    for (auto& v : values) { v = dist(gen); }
    bool all_zero = true;
    for (auto v : values) { all_zero = all_zero && v == 0; }
    if (all_zero && n > 0) { values[n / 2] = hi != 0 ? hi : lo; }
    return values;
}

/** `n` floats drawn uniformly from [lo, hi) with the given seed, never all zero. */
inline std::vector<float> randomFloats(size_t n, uint64_t seed, float lo, float hi) {
    std::mt19937_64 gen(generatorSeed(seed));
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> values(n);
    bool all_zero = true;
    for (auto& v : values) {
        v = dist(gen);
        all_zero = all_zero && v == 0;
    }
    if (all_zero && n > 0) { values[n / 2] = hi != 0 ? hi : lo; }
    return values;
}

/**
 * `n` segment flags (0 or 1) with the given seed: about one element in `mean_segment`
 * starts a segment, and element 0 starts one only sometimes, because a scan must also
 * handle an array that begins inside a segment.
 */
inline std::vector<char> randomFlags(size_t n, uint64_t seed, uint32_t mean_segment) {
    std::mt19937_64 gen(generatorSeed(seed) ^ 0x5eed5eedULL);
    std::uniform_int_distribution<uint32_t> dist(0, mean_segment - 1);
    std::vector<char> flags(n);
    for (auto& f : flags) { f = dist(gen) == 0 ? 1 : 0; }
    return flags;
}

/** The comma-separated numbers of environment variable `name`, or `fallback` when it is unset. */
inline std::vector<uint32_t> numbersFromEnvironment(const char* name, std::vector<uint32_t> fallback) {
    const char* given = std::getenv(name);
    if (given == nullptr) { return fallback; }
    std::vector<uint32_t> numbers;
    for (const char* next = given; *next != '\0';) {
        char* end = nullptr;
        const unsigned long number = std::strtoul(next, &end, 10);
        if (end == next) { break; }  // not a number
        numbers.push_back(uint32_t(number));
        next = *end == ',' ? end + 1 : end;
    }
    return numbers;
}

/**
 * Array sizes that sit on and next to every boundary the kernels care about. The grader's
 * hidden cases replace them with sizes it draws on each run, given in KERNELLAB_SIZES
 * (comma-separated), so that a solution cannot be fitted to the sizes the handout shows.
 */
inline std::vector<uint32_t> hostileSizes() {
    return numbersFromEnvironment("KERNELLAB_SIZES",
                                  {1, 31, 32, 33, 1023, 1024, 1025, (1u << 13) - 1, (1u << 13) + 1,
                                   (1u << 17) - 1, (1u << 17) + 1, (1u << 20) + 1, 1000003 /* prime */});
}

/**
 * The array size of a test's hidden `[large]` cases, which only a GPU runs: `course_size` (a
 * course's own size, past what the graded sizes reach), or the size the grader draws past 2^26
 * on each run and gives in KERNELLAB_LARGE_SIZE, so that a solution cannot be fitted to one size.
 */
inline uint32_t largeSize(uint32_t course_size) {
    const auto given = numbersFromEnvironment("KERNELLAB_LARGE_SIZE", {course_size});
    return given.empty() || given[0] == 0 ? course_size : given[0];
}

/**
 * Every block size the course allows: powers of two from one warp to 1024 threads. The grader's
 * sanitizer runs narrow them (KERNELLAB_BLOCK_SIZES), since a sanitizer slows each launch 10-100x.
 */
inline std::vector<uint32_t> blockSizes() {
    return numbersFromEnvironment("KERNELLAB_BLOCK_SIZES", {32, 64, 128, 256, 512, 1024});
}

/** An array size and the block size a test runs it with. */
struct SizeAndBlock {
    uint32_t n;
    uint32_t block;
};

/**
 * The (size, block size) pairs of a test: every hostile size up to 2^16 with every block size,
 * because index arithmetic breaks at warp and block multiples whatever the block size; each
 * larger size with one block size, taken in turn from both ends of the list (the smallest, the
 * largest, the second smallest, ...). A large array repeats the blocks that the small sizes
 * already check and adds blocks to the multi-block phases, which 2^13+1 already spreads over
 * up to 257 blocks, while each of its launches costs more than all the small ones together. On
 * the CPU backend, which runs every launch under three thread orders, the pbb suite took about
 * 1,050 CPU-seconds with the full product and takes 190 with these pairs.
 */
inline std::vector<SizeAndBlock> sizeAndBlockCases() {
    constexpr uint32_t largest_with_every_block = 1u << 16;
    const auto blocks = blockSizes();
    std::vector<SizeAndBlock> cases;
    size_t turn = 0;
    for (const uint32_t n : hostileSizes()) {
        if (n <= largest_with_every_block) {
            for (const uint32_t block : blocks) { cases.push_back({n, block}); }
            continue;
        }
        const size_t position = turn++ % blocks.size();
        const size_t from_an_end = position / 2;
        cases.push_back({n, blocks[position % 2 == 0 ? from_an_end : blocks.size() - 1 - from_an_end]});
    }
    return cases;
}

}  // namespace kernellab
