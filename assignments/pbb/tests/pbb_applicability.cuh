// What a solution's own code promises, decided at compile time from its declarations. The PMPH
// course's code promises less than kernellab's: its Mssp cannot be lifted to flag-value pairs
// (the course's segmented scan is for Add only), and its host wrappers ask for more shared
// memory than a launch gets by default with large blocks. A test case beyond that promise is
// not run against the solution ("not applicable to this submission"), and is never a failure.
//
// The tests skip such cases with these traits; the grader learns the same decisions from
// probes (probe_*.cu) that its build compiles from the solution's headers: a probe that
// compiles says "applicable". Nothing a test run reports decides what is applicable.
// grader/kernellab/applicability.py names the cases each probe covers and words the reasons.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "pbb_solution.cuh"

namespace kernellab_applicability {
/** What `::withChunk` names when the solution has none (kernellab's host wrappers have one). */
struct NoChunkChoice {};
}  // namespace kernellab_applicability
template<size_t>
kernellab_applicability::NoChunkChoice withChunk(kernellab_applicability::NoChunkChoice);

namespace pbb {

/**
 * Whether `LiftOP<OP>` can be instantiated: LiftOP's `apply` and `equals` hand `OP::apply` and
 * `OP::equals` the values of const flag-value pairs. The course's Mssp takes non-const
 * (volatile) references, so LiftOP<Mssp> does not compile with the course's operators.
 */
template<class OP, class = void>
struct Liftable : std::false_type {};
template<class OP>
struct Liftable<OP, std::void_t<decltype(OP::apply(std::declval<const typename OP::RedElTp&>(),
                                                   std::declval<const typename OP::RedElTp&>())),
                                decltype(OP::equals(std::declval<const typename OP::RedElTp&>(),
                                                    std::declval<const typename OP::RedElTp&>()))>>
    : std::true_type {};

/**
 * Whether the solution's host wrappers choose their chunk per block size (kernellab's
 * `withChunk`, which keeps a block's shared memory within the default for every block size).
 * The course's wrappers use ELEMS_PER_THREAD words per thread whatever the block size.
 */
template<class V, class = void>
struct ChoosesChunkPerBlock : std::false_type {};
template<class V>
struct ChoosesChunkPerBlock<V, std::void_t<decltype(::withChunk<sizeof(V)>(
                                   uint32_t(32), std::declval<size_t (*)(uint32_t, uint32_t)>(),
                                   std::declval<void (*)(std::integral_constant<uint32_t, 1>)>()))>>
    : std::true_type {};

/** Shared memory a block may use without opting in: 48 KB on every NVIDIA GPU. */
constexpr uint64_t kDefaultSharedMemoryBytes = 48 * 1024;

/**
 * The most shared memory the course's host wrappers ask for per block of `block` threads:
 * each thread's chunk is ELEMS_PER_THREAD 4-byte words (mapReduce of a non-commutative
 * operator, scanInc and sgmScanInc size their launches this way, and never opt in to more).
 */
constexpr uint64_t courseChunkBytes(uint32_t block) { return uint64_t(block) * ELEMS_PER_THREAD * 4; }

/** Whether the solution's chunked host wrappers can launch blocks of `block` threads. */
constexpr bool hostWrappersLaunch(uint32_t block) {
    return ChoosesChunkPerBlock<char>::value || courseChunkBytes(block) <= kDefaultSharedMemoryBytes;
}

}  // namespace pbb
