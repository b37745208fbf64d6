// Task ordered (rung 8): an operator that is not commutative (2x2 matrix products), and
// commutative ones through the same kernel.
#include "reduce_testing.cuh"

TEMPLATE_TEST_CASE("reduceOrdered reduces every size with every block size, in order", "[ordered]", MatMul,
                   Add<int32_t>, Max<int32_t>, Jitter<MatMul>) {
    typedef TestType OP;
    const uint32_t n = GENERATE(from_range(kernellab::hostileSizes()));
    const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));
    const uint64_t seed = 600 + n;
    KL_CAPTURE(n, block, seed);
    reduce_test::checkExact<OP>("reduceOrdered", reduceOrdered<OP>, n, block, seed);
}

// Graded on what the task teaches: coalesced loads, measured by counting (issue 15).
#include "ordered_properties.cuh"
