// Task scan-block: scanIncBlock, through a kernel in which every block scans its elements.
// Jitter<OP> delays threads at random, so the race of the course's version (only with 1024
// threads) shows up on the GPU instead of hiding behind its usual timing.
// First, before the solution: on a GPU, its block barriers count (scan_block_properties.cuh).
#include "kernellab/count_barriers.hpp"
#include "pbb_testing.cuh"

using kernellab::DeviceBuffer;

namespace {

template<class OP>
__global__ void scanIncBlockKernel(typename OP::RedElTp* d_out, typename OP::RedElTp* d_in, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem = (typename OP::RedElTp*)sh_mem;
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    shmem[threadIdx.x] = gid < N ? d_in[gid] : OP::identity();
    __syncthreads();
    typename OP::RedElTp res = scanIncBlock<kernellab::Stepped<OP>>(shmem, threadIdx.x);
    if (gid < N) { d_out[gid] = res; }
}

template<class OP>
void checkScanIncBlock(uint32_t n, uint32_t block, uint64_t seed) {
    const auto input = pbb::mapAll<OP>(pbb::Inputs<OP>::make(n, seed));
    DeviceBuffer<typename OP::RedElTp> d_in(input), d_out(n);
    scanIncBlockKernel<OP><<<pbb::blocksFor(n, block), block, block * sizeof(typename OP::RedElTp)>>>(
        d_out.data(), d_in.data(), n);
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), [&] { return pbb::scanModel<OP>(input, block); }(), pbb::Equals<OP>{},
                     (kernellab::Layout{block, block}));
}

}  // namespace

TEMPLATE_TEST_CASE("scanIncBlock scans each block's elements", "[scan-block]",
                   Add<int>, Add<float>, Max<int>, Mssp) {
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    const uint64_t seed  = 4000 + n;
    KL_CAPTURE(n, block, seed);
    checkScanIncBlock<TestType>(n, block, seed);
}

TEMPLATE_TEST_CASE("scanIncBlock stays correct when threads are delayed at random", "[scan-block][random-delays]",
                   Jitter<Add<int>>, Jitter<Mssp>) {
    const uint32_t block = GENERATE(from_range(kernellab::blockSizes()));
    const uint32_t n     = GENERATE(1024u, 200u * 1024u + 17u);
    const uint64_t seed  = GENERATE(1u, 2u, 3u);
    KL_CAPTURE(n, block, seed);
    checkScanIncBlock<TestType>(n, block, seed);
}

// Graded on the task's rule: no barrier added to fix the race, measured by counting.
#include "scan_block_properties.cuh"
