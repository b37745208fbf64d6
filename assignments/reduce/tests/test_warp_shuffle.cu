// Task warp-shuffle (rung 6): the rung-6 wrapper, and blockReduceShuffle alone in one block on an
// operator that is not commutative, so that combining the threads out of order shows.
#include "reduce_testing.cuh"

REDUCE_SEGMENT_RUNG_TESTS(reduceShuffle, "[warp-shuffle]", 2 * block, Add<int32_t>, Add<float>, Max<int32_t>,
                          Min<int32_t>)

/** One block: thread t contributes `d_in[t]`, thread 0 writes the block's result. */
template<class OP>
__global__ void blockReduceShuffleKernel(typename OP::Elem* d_out, const typename OP::Elem* d_in) {
    const typename OP::Elem value = blockReduceShuffle<OP>(d_in[threadIdx.x], sharedElems<typename OP::Elem>());
    if (threadIdx.x == 0) { *d_out = value; }
}

TEMPLATE_TEST_CASE("blockReduceShuffle combines the threads' values in thread order", "[warp-shuffle]", MatMul,
                   Add<int32_t>) {
    typedef TestType OP;
    typedef typename OP::Elem T;
    const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));
    const uint64_t seed = GENERATE(1u, 2u, 3u);
    KL_CAPTURE(block, seed);
    const auto input = reduce_test::Model<OP>::inputs(block, seed);
    kernellab::DeviceBuffer<T> d_in(input), d_out(1);
    blockReduceShuffleKernel<OP><<<1, block, (block / WARP) * sizeof(T)>>>(d_out.data(), d_in.data());
    KL_CHECK_LAUNCH();
    const auto expected = [&] { return std::vector<T>{reduce_test::Model<OP>::reduce(input)}; };
    KL_REQUIRE_EQUAL(d_out.download(), expected(), reduce_test::SameBits{}, kernellab::Layout{});
}

// Graded on what the task teaches: reductions in lg steps, measured by counting (issue 15).
#include "warp_shuffle_properties.cuh"
