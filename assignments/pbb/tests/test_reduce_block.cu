// Task reduce-block: the in-block reductions of redAssoc1Block and redCommuKernel, each on its
// own, then mapReduce end to end (which also runs redAssocKernel for non-commutative operators).
#include "pbb_testing.cuh"

using kernellab::DeviceBuffer;

TEMPLATE_TEST_CASE("redAssoc1Block reduces up to 1024 elements in index order into element 0", "[reduce-block]",
                   Add<int>, Add<float>, Max<int>, Mssp, Jitter<Mssp>) {
    typedef TestType OP;
    const uint32_t n    = GENERATE(1u, 2u, 31u, 32u, 33u, 100u, 511u, 1000u, 1023u, 1024u);
    const uint64_t seed = GENERATE(5u, 6u);
    KL_CAPTURE(n, seed);

    const auto input = pbb::mapAll<OP>(pbb::Inputs<OP>::make(n, seed));
    DeviceBuffer<typename OP::RedElTp> d_inout(input);
    const uint32_t block = pbb::warpMultiple(n);
    redAssoc1Block<kernellab::Stepped<OP>><<<1, block, block * sizeof(typename OP::RedElTp)>>>(d_inout.data(), n);
    KL_CHECK_LAUNCH();

    const std::vector<typename OP::RedElTp> result{d_inout.download()[0]};
    const auto expected = [&] { return std::vector<typename OP::RedElTp>{pbb::reduceModel<OP>(input)}; };
    KL_REQUIRE_EQUAL(result, expected(), pbb::Equals<OP>{}, (kernellab::Layout{block, block}));
}

TEMPLATE_TEST_CASE("redCommuKernel leaves one partial result per block for a commutative operator", "[reduce-block]",
                   Add<int>, Add<float>, Max<int>, Jitter<Add<int>>) {
    typedef TestType OP;
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n      = size_and_block.n;
    const uint32_t block  = size_and_block.block;
    const uint32_t blocks = GENERATE(1u, 3u, 64u);
    const uint64_t seed   = 6000 + n;
    KL_CAPTURE(n, block, blocks, seed);

    const auto input = pbb::Inputs<OP>::make(n, seed);
    DeviceBuffer<typename OP::InpElTp> d_in(input);
    DeviceBuffer<typename OP::RedElTp> d_out(blocks);
    const uint32_t threads = blocks * block;
    redCommuKernel<kernellab::Stepped<OP>><<<blocks, block, block * sizeof(typename OP::RedElTp)>>>(d_out.data(), d_in.data(), n, threads);
    KL_CHECK_LAUNCH();

    // Thread t reduces the elements t, t + T, t + 2T, ...: element i belongs to block (i mod T) / B.
    const auto expected = [&] {
        std::vector<typename OP::RedElTp> partials(blocks, OP::identity());
        for (uint32_t i = 0; i < n; i++) {
            auto& partial = partials[(i % threads) / block];
            typename OP::RedElTp el = OP::mapFun(input[i]);
            partial = OP::apply(partial, el);
        }
        return partials;
    };
    KL_REQUIRE_EQUAL(d_out.download(), expected(), pbb::Equals<OP>{}, (kernellab::Layout{1, 1}));
}

namespace {

template<class OP>
void checkMapReduce(uint32_t n, uint32_t block, uint64_t seed) {
    // A non-commutative operator goes through the chunked redAssocKernel.
    if (!OP::commutative && !pbb::hostWrappersLaunch(block)) {
        pbb::notApplicable(pbb::hostWrappersCannotLaunch(block));
        return;
    }
    const auto input = pbb::Inputs<OP>::make(n, seed);
    DeviceBuffer<typename OP::InpElTp> d_in(input);
    DeviceBuffer<typename OP::RedElTp> d_out(pbb::maxBlock());
    kernellab::recordBytesToHost("mapReduce", [&] { mapReduce<kernellab::Stepped<OP>>(block, n, d_out.data(), d_in.data()); });
    KL_CHECK_LAUNCH();

    const std::vector<typename OP::RedElTp> result{d_out.download()[0]};
    const auto expected = [&] { return std::vector<typename OP::RedElTp>{pbb::reduceModel<OP>(pbb::mapAll<OP>(input))}; };
    KL_REQUIRE_EQUAL(result, expected(), pbb::Equals<OP>{}, kernellab::Layout{});
}

}  // namespace

TEMPLATE_TEST_CASE("mapReduce reduces the whole array into element 0", "[reduce-block]",
                   Add<int>, Add<float>, Max<int>, Mssp) {
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    const uint64_t seed  = 7000 + n;
    KL_CAPTURE(n, block, seed);
    checkMapReduce<TestType>(n, block, seed);
}

TEST_CASE("mapReduce reduces the course's array size, past 2^26 elements", "[.large]") {
    const uint32_t n     = kernellab::largeSize(pbb::kCourseSize);
    const uint32_t block = GENERATE(256u, 1024u);
    const uint64_t seed  = 42;
    KL_CAPTURE(n, block, seed);
    checkMapReduce<Add<int>>(n, block, seed);
}
