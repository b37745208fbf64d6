// Task scan-warp: scanIncWarp, through a kernel in which every warp scans its 32 elements.
#include "pbb_testing.cuh"

using kernellab::DeviceBuffer;

namespace {

/** Each warp scans its 32 elements; returns both the results and `ptr` afterwards. */
template<class OP>
__global__ void scanIncWarpKernel(typename OP::RedElTp* d_returned, typename OP::RedElTp* d_in_place,
                                  typename OP::RedElTp* d_in, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem = (typename OP::RedElTp*)sh_mem;
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    shmem[threadIdx.x] = gid < N ? d_in[gid] : OP::identity();
    __syncthreads();
    typename OP::RedElTp res = scanIncWarp<kernellab::Stepped<OP>>(shmem, threadIdx.x);
    __syncthreads();
    if (gid < N) {
        d_returned[gid] = res;
        d_in_place[gid] = OP::remVolatile(shmem[threadIdx.x]);
    }
}

}  // namespace

TEMPLATE_TEST_CASE("scanIncWarp scans each warp's 32 elements in place and returns each lane's result",
                   "[scan-warp]", Add<int>, Add<float>, Max<int>, Mssp, Jitter<Mssp>) {
    typedef TestType OP;
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    const uint64_t seed  = 3000 + n;
    KL_CAPTURE(n, block, seed);

    const auto input = pbb::mapAll<OP>(pbb::Inputs<OP>::make(n, seed));
    DeviceBuffer<typename OP::RedElTp> d_in(input), d_returned(n), d_in_place(n);
    scanIncWarpKernel<OP><<<pbb::blocksFor(n, block), block, block * sizeof(typename OP::RedElTp)>>>(
        d_returned.data(), d_in_place.data(), d_in.data(), n);
    KL_CHECK_LAUNCH();

    const auto expected = [&] { return pbb::scanModel<OP>(input, WARP); };
    const kernellab::Layout layout{block, block};
    // Blocks, not SECTIONs: Catch2 runs a test case once per SECTION, the launch included.
    {
        INFO("the returned values");
        KL_REQUIRE_EQUAL(d_returned.download(), expected(), pbb::Equals<OP>{}, layout);
    }
    {
        INFO("the shared memory afterwards");
        KL_REQUIRE_EQUAL(d_in_place.download(), expected(), pbb::Equals<OP>{}, layout);
    }
}

// Graded on what the task teaches: lg(WARP) dependent steps, measured by counting (issue 15).
#include "scan_warp_properties.cuh"
