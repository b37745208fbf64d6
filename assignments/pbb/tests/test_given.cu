// The kernels the skeleton gives complete: they belong to no task and earn no points. They call
// the student's copies and scanIncBlock, so they fail where those do (on the skeleton, at block
// size 1024, through scan-block's race); tested so that a mistake of their own shows up here.
#include "pbb_testing.cuh"

using kernellab::DeviceBuffer;

TEST_CASE("naiveMemcpy copies N ints and nothing past them", "[given]") {
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    KL_CAPTURE(n, block);
    auto input = kernellab::randomInts(n, n, -100000, 100000);
    DeviceBuffer<int> d_in(input), d_out(n + 1);
    naiveMemcpy<<<pbb::blocksFor(n, block), block>>>(d_out.data(), d_in.data(), n);
    KL_CHECK_LAUNCH();
    const auto expected = [&] {
        auto copied = input;
        copied.push_back(kernellab::poisonValue<int>());
        return copied;
    };
    KL_REQUIRE_EQUAL(d_out.download(), expected(), std::equal_to<int>{}, (kernellab::Layout{block, block}));
}

TEMPLATE_TEST_CASE("mapredNaive reduces the whole array into element 0", "[given]",
                   Add<int>, Add<float>, Max<int>, Mssp) {
    typedef TestType OP;
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    KL_CAPTURE(n, block);
    // The course's naive reduction is a tree of pairs: it needs two elements at least, and a
    // scratch array of 2N (its driver's), since its levels need not fit in N.
    if (n < 2) { return; }
    const auto input = pbb::Inputs<OP>::make(n, n + 1);
    // A poisoned element follows the input: the last pair of an odd N has no second element, and
    // a read of d_in[N] must not pass by luck (fresh GPU memory there is often zero).
    std::vector<typename OP::InpElTp> padded(input);
    padded.push_back(kernellab::poisonValue<typename OP::InpElTp>());
    DeviceBuffer<typename OP::InpElTp> d_in(padded);
    DeviceBuffer<typename OP::RedElTp> d_out(2 * size_t(n));
    mapredNaive<kernellab::Stepped<OP>>(block, n, d_out.data(), d_in.data());
    KL_CHECK_LAUNCH();
    const std::vector<typename OP::RedElTp> result{d_out.download()[0]};
    const auto expected = [&] { return std::vector<typename OP::RedElTp>{pbb::reduceModel<OP>(pbb::mapAll<OP>(input))}; };
    KL_REQUIRE_EQUAL(result, expected(), pbb::Equals<OP>{}, kernellab::Layout{});
}

TEMPLATE_TEST_CASE("redAssocKernel reduces each block's consecutive range", "[given]", Add<int>, Mssp) {
    typedef TestType OP;
    constexpr uint32_t CHUNK = 3;
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n          = size_and_block.n;
    const uint32_t block      = size_and_block.block;
    const uint32_t seq_chunks = GENERATE(1u, 4u);
    KL_CAPTURE(n, block, seq_chunks);
    const uint64_t per_block = uint64_t(seq_chunks) * CHUNK * block;
    const uint32_t blocks    = uint32_t((n + per_block - 1) / per_block);

    const auto input = pbb::Inputs<OP>::make(n, n + 2);
    DeviceBuffer<typename OP::InpElTp> d_in(input);
    DeviceBuffer<typename OP::RedElTp> d_tmp(blocks);
    redAssocKernel<kernellab::Stepped<OP>, CHUNK><<<blocks, block, block * CHUNK * sizeof(typename OP::RedElTp)>>>(
        d_tmp.data(), d_in.data(), n, seq_chunks);
    KL_CHECK_LAUNCH();

    const auto expected = [&] {
        const auto mapped = pbb::mapAll<OP>(input);
        std::vector<typename OP::RedElTp> partials;
        for (uint64_t b = 0; b < blocks; b++) {
            const auto first = mapped.begin() + b * per_block;
            const auto last  = mapped.begin() + std::min<uint64_t>(n, (b + 1) * per_block);
            partials.push_back(pbb::reduceModel<OP>(std::vector<typename OP::RedElTp>(first, last)));
        }
        return partials;
    };
    KL_REQUIRE_EQUAL(d_tmp.download(), expected(), pbb::Equals<OP>{}, (kernellab::Layout{1, 1}));
}

TEMPLATE_TEST_CASE("scan1Block scans up to 1024 elements in place", "[given]", Add<int>, Mssp) {
    typedef TestType OP;
    const uint32_t n = GENERATE(1u, 31u, 32u, 33u, 500u, 1023u, 1024u);
    KL_CAPTURE(n);
    const auto input = pbb::mapAll<OP>(pbb::Inputs<OP>::make(n, n + 3));
    DeviceBuffer<typename OP::RedElTp> d_inout(input);
    const uint32_t block = pbb::warpMultiple(n);
    scan1Block<kernellab::Stepped<OP>><<<1, block, block * sizeof(typename OP::RedElTp)>>>(d_inout.data(), n);
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_inout.download(), [&] { return pbb::scanModel<OP>(input); }(), pbb::Equals<OP>{},
                     (kernellab::Layout{block, block}));
}
