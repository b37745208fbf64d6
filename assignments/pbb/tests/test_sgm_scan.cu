// Task sgm-scan: sgmScanIncWarp on its own, sgmScanIncBlock built on it, then sgmScanInc end to end.
#include "pbb_testing.cuh"

using kernellab::DeviceBuffer;

namespace {

/** Each warp (or block) scans its flag-value pairs; values and flags come back separately. */
template<class OP, bool WHOLE_BLOCK>
__global__ void sgmScanKernel(typename OP::RedElTp* d_vals_out, char* d_flags_out,
                              typename OP::RedElTp* d_vals, char* d_flags, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem_vals = (typename OP::RedElTp*)sh_mem;
    volatile char* shmem_flags = (char*)(sh_mem + blockDim.x * sizeof(typename OP::RedElTp));
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    shmem_vals[threadIdx.x]  = gid < N ? d_vals[gid] : OP::identity();
    shmem_flags[threadIdx.x] = gid < N ? d_flags[gid] : 0;
    __syncthreads();
    ValFlg<typename OP::RedElTp> res = WHOLE_BLOCK
        ? sgmScanIncBlock<kernellab::Stepped<OP>, char>(shmem_vals, shmem_flags, threadIdx.x)
        : sgmScanIncWarp<kernellab::Stepped<OP>, char>(shmem_vals, shmem_flags, threadIdx.x);
    if (gid < N) {
        d_vals_out[gid]  = res.v;
        d_flags_out[gid] = res.f;
    }
}

template<class OP, bool WHOLE_BLOCK>
void checkSgmScan(uint32_t n, uint32_t block, uint32_t mean_segment, uint64_t seed) {
    const auto values = pbb::mapAll<OP>(pbb::Inputs<OP>::make(n, seed));
    const auto flags  = kernellab::randomFlags(n, seed, mean_segment);
    DeviceBuffer<typename OP::RedElTp> d_vals(values), d_vals_out(n);
    DeviceBuffer<char> d_flags(flags), d_flags_out(n);
    const size_t shmem = block * (sizeof(typename OP::RedElTp) + 1);
    sgmScanKernel<OP, WHOLE_BLOCK><<<pbb::blocksFor(n, block), block, shmem>>>(
        d_vals_out.data(), d_flags_out.data(), d_vals.data(), d_flags.data(), n);
    KL_CHECK_LAUNCH();

    const auto expected = [&] { return pbb::sgmScanModel<OP>(values, flags, WHOLE_BLOCK ? block : WARP); };
    const kernellab::Layout layout{block, block};
    KL_REQUIRE_EQUAL(d_vals_out.download(), pbb::valuesOf(expected()), pbb::Equals<OP>{}, layout);
    KL_REQUIRE_EQUAL(d_flags_out.download(), pbb::flagsOf(expected()), pbb::FlagEquals{}, layout);
}

template<class OP>
void checkSgmScanInc(uint32_t n, uint32_t block, uint32_t mean_segment, uint64_t seed) {
    if (!pbb::hostWrappersLaunch(block)) {
        pbb::notApplicable(pbb::hostWrappersCannotLaunch(block));
        return;
    }
    const auto input = pbb::Inputs<OP>::make(n, seed);
    const auto flags = kernellab::randomFlags(n, seed, mean_segment);
    DeviceBuffer<typename OP::InpElTp> d_in(input);
    DeviceBuffer<char> d_flags(flags), d_tmp_flags(pbb::maxBlock());
    DeviceBuffer<typename OP::RedElTp> d_out(n), d_tmp_vals(pbb::maxBlock());
    kernellab::recordBytesToHost("sgmScanInc", [&] {
        sgmScanInc<kernellab::Stepped<OP>>(block, n, d_out.data(), d_flags.data(), d_in.data(), d_tmp_vals.data(), d_tmp_flags.data());
    });
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_out.download(), pbb::valuesOf(pbb::sgmScanModel<OP>(pbb::mapAll<OP>(input), flags)),
                     pbb::Equals<OP>{}, kernellab::Layout{});
}

/** What a test case checks: sgmScanIncWarp or sgmScanIncBlock through sgmScanKernel, or sgmScanInc. */
enum class SgmScope { Warp, Block, WholeArray };

/**
 * One test case's checks, the same for the three functions: every (size, block size) pair of
 * sizeAndBlockCases, each with two mean segment lengths and the seed `seed_base + n`. It first
 * asks whether LiftOP<OP> compiles with the solution's operators (the course's segmented scan is
 * for Add only): `if constexpr`, so that a solution whose LiftOP<Mssp> does not compile still
 * builds the other cases.
 */
template<class OP, SgmScope SCOPE>
void checkEveryCase(uint32_t short_segment, uint32_t long_segment, uint64_t seed_base) {
    if constexpr (!pbb::Liftable<OP>::value) {
        pbb::notApplicable(pbb::kNotLiftable);
    } else {
        const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
        const uint32_t n       = size_and_block.n;
        const uint32_t block   = size_and_block.block;
        const uint32_t segment = GENERATE_COPY(short_segment, long_segment);
        const uint64_t seed    = seed_base + n;
        KL_CAPTURE(n, block, segment, seed);
        if constexpr (SCOPE == SgmScope::WholeArray) {
            checkSgmScanInc<OP>(n, block, segment, seed);
        } else {
            checkSgmScan<OP, SCOPE == SgmScope::Block>(n, block, segment, seed);
        }
    }
}

}  // namespace

TEMPLATE_TEST_CASE("sgmScanIncWarp scans each warp's pairs, restarting at every flag", "[sgm-scan]",
                   Add<int>, Add<float>, Max<int>, Mssp) {
    checkEveryCase<TestType, SgmScope::Warp>(3, 40, 9000);
}

TEMPLATE_TEST_CASE("sgmScanIncBlock scans each block's pairs, restarting at every flag", "[sgm-scan]",
                   Add<int>, Mssp, Jitter<Mssp>) {
    checkEveryCase<TestType, SgmScope::Block>(5, 700, 10000);
}

TEMPLATE_TEST_CASE("sgmScanInc scans segmented arrays of any size with any block size", "[sgm-scan]",
                   Add<int>, Add<float>, Max<int>, Mssp) {
    checkEveryCase<TestType, SgmScope::WholeArray>(4, 5000, 11000);
}

TEST_CASE("sgmScanInc scans the course's array size, past 2^26 elements", "[.large]") {
    const uint32_t n            = kernellab::largeSize(pbb::kCourseSize);
    const uint32_t block        = 256;
    const uint32_t mean_segment = 1000;
    const uint64_t seed         = 43;
    KL_CAPTURE(n, block, mean_segment, seed);
    checkSgmScanInc<Add<int>>(n, block, mean_segment, seed);
}
