// The CPU backend's cooperative groups (grader/cpu/include/cooperative_groups.h): kernels written
// with them (cooperative_groups_kernels.cuh) give CUDA's results at block sizes from 32 to 1024
// and sizes that leave blocks and warps partly empty, and the backend's checks see through them:
// a missing block.sync() is a race, a tile shuffle from a rank that no thread has is a misused
// warp collective, and block.sync() beside __syncthreads() is barrier divergence.
#include <algorithm>
#include <climits>
#include <fstream>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "cooperative_groups_kernels.cuh"
#include "kernellab/catch.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"
#include "kernellab_cpu/finding.hpp"

using kernellab::DeviceBuffer;
using kernellab::cpu::Finding;
using kernellab::cpu::FindingKind;
namespace kernels = cooperative_kernels;

namespace {

/** The line of `file` that carries the comment `// site: <name>`. */
int lineOf(const std::string& file, const std::string& name) {
    std::ifstream source(file);
    std::string text;
    for (int line = 1; std::getline(source, text); line++) {
        if (text.find("// site: " + name) != std::string::npos && text.find("lineOf") == std::string::npos) {
            return line;
        }
    }
    FAIL("no line marked 'site: " << name << "' in " << file);
    return 0;
}

/** Runs `launch`, which must be reported as `kind` at the line of `file` marked `site`. */
template<class Launch>
void requireFinding(Launch&& launch, FindingKind kind, const std::string& file, const std::string& site) {
    try {
        launch();
    } catch (const Finding& finding) {
        CAPTURE(finding.what());
        CHECK(std::string(kernellab::cpu::findingName(finding.kind)) == kernellab::cpu::findingName(kind));
        CHECK(finding.file == file);
        CHECK(finding.line == lineOf(file, site));
        return;
    }
    FAIL("not reported: a " << kernellab::cpu::findingName(kind) << " at the line marked " << site);
}

unsigned blocksFor(unsigned n, unsigned block) { return (n + block - 1) / block; }

/** Each warp's (32 elements from 0) inclusive scan of `input` under `op`, from the warp's first element. */
template<class Op>
std::vector<int> warpInclusive(const std::vector<int>& input, Op op) {
    std::vector<int> scanned(input.size());
    for (size_t i = 0; i < input.size(); i++) { scanned[i] = i % 32 == 0 ? input[i] : op(scanned[i - 1], input[i]); }
    return scanned;
}

// ---- scans and reductions -------------------------------------------------------------------

TEST_CASE("Cooperative groups: a warp's scans are CUDA's at every block size", "[cooperative-groups]") {
    const unsigned block = GENERATE(32u, 96u, 256u, 1024u);
    const unsigned n = GENERATE(1u, 31u, 33u, 1000u, 4099u);
    CAPTURE(block, n);
    const auto input = kernellab::randomInts(n, 41 + n, -1000, 1000);
    DeviceBuffer<int> d_in(input), d_out(4 * size_t(n));
    kernels::warpScans<<<blocksFor(n, block), block>>>(d_out.data(), d_in.data(), n);
    KL_CHECK_LAUNCH();
    const auto out = d_out.download();
    const auto inclusive = warpInclusive(input, [](int a, int b) { return a + b; });
    const auto maxima = warpInclusive(input, [](int a, int b) { return std::max(a, b); });
    for (unsigned i = 0; i < n; i++) {
        CAPTURE(i);
        REQUIRE(out[i] == inclusive[i]);
        REQUIRE(out[n + i] == inclusive[i]);
        REQUIRE(out[2 * n + i] == inclusive[i] - input[i]);
        REQUIRE(out[3 * n + i] == (i % 32 == 0 ? 0 : maxima[i - 1]));
    }
}

TEST_CASE("Cooperative groups: a scan applies a non-commutative operator to 16-byte values as CUDA does",
          "[cooperative-groups]") {
    // CUDA's tile scan applies op(own, received): lane r gets x[r] then x[r-1] ... then x[warp's first].
    const unsigned n = 4 * 64;
    const auto draws = kernellab::randomInts(2 * n, 43, -9, 9);
    const long long factors[4] = {-2, -1, 1, 2};  // 32 of them multiply to at most 2^32
    std::vector<kernels::Affine> input(n);
    for (unsigned i = 0; i < n; i++) { input[i] = kernels::Affine{factors[(draws[2 * i] + 9) % 4], draws[2 * i + 1]}; }
    DeviceBuffer<kernels::Affine> d_in(input), d_out(n);
    kernels::affineWarpScan<<<4, 64>>>(d_out.data(), d_in.data());
    KL_CHECK_LAUNCH();
    const auto out = d_out.download();
    kernels::Affine expected{1, 0};
    for (unsigned i = 0; i < n; i++) {
        expected = i % 32 == 0 ? input[i] : kernels::Compose()(input[i], expected);
        CAPTURE(i);
        REQUIRE(out[i].a == expected.a);
        REQUIRE(out[i].b == expected.b);
    }
}

TEST_CASE("Cooperative groups: block reductions with cg::reduce are right at every block size", "[cooperative-groups]") {
    const unsigned block = GENERATE(32u, 64u, 160u, 512u, 1024u);
    const unsigned n = GENERATE(1u, 100u, 3000u);
    CAPTURE(block, n);
    const auto input = kernellab::randomInts(n, 47 + n, -100000, 100000);
    const unsigned blocks = blocksFor(n, block);
    DeviceBuffer<int> d_in(input), d_out(6 * size_t(blocks));
    kernels::blockReductions<<<blocks, block>>>(d_out.data(), d_in.data(), n);
    KL_CHECK_LAUNCH();
    const auto out = d_out.download();
    for (unsigned b = 0; b < blocks; b++) {
        const auto first = input.begin() + b * block;
        const auto last = input.begin() + std::min(n, (b + 1) * block);
        int sum = 0, minimum = INT_MAX, maximum = INT_MIN, all = -1, any = 0, parity = 0;
        for (auto v = first; v != last; ++v) {
            sum += *v;
            minimum = std::min(minimum, *v);
            maximum = std::max(maximum, *v);
            all &= *v;
            any |= *v;
            parity ^= *v;
        }
        CAPTURE(b);
        CHECK(std::vector<int>(out.begin() + 6 * b, out.begin() + 6 * b + 6)
              == std::vector<int>{sum, minimum, maximum, all, any, parity});
    }
}

TEST_CASE("Cooperative groups: a block scan is right, and a missing block.sync() is a race", "[cooperative-groups]") {
    SECTION("with every block.sync(), at every block size") {
        const unsigned block = GENERATE(32u, 64u, 160u, 512u, 1024u);
        const unsigned n = GENERATE(1u, 33u, 1000u, 5000u);
        CAPTURE(block, n);
        const auto input = kernellab::randomInts(n, 53 + n, -1000, 1000);
        DeviceBuffer<int> d_in(input), d_out(n);
        kernels::blockScan<<<blocksFor(n, block), block>>>(d_out.data(), d_in.data(), n, true);
        KL_CHECK_LAUNCH();
        const auto out = d_out.download();
        int running = 0;
        for (unsigned i = 0; i < n; i++) {
            running = (i % block == 0 ? 0 : running) + input[i];
            CAPTURE(i);
            REQUIRE(out[i] == running);
        }
    }
    SECTION("without the barrier between the warps' totals and their scan") {
        const auto input = kernellab::randomInts(1000, 59, -1000, 1000);
        DeviceBuffer<int> d_in(input), d_out(input.size());
        requireFinding([&] { kernels::blockScan<<<4, 256>>>(d_out.data(), d_in.data(), 1000, false); },  // site: racy-scan
                       FindingKind::Race, __FILE__, "racy-scan");
    }
}

// ---- the groups themselves ---------------------------------------------------------------

TEST_CASE("Cooperative groups: ranks, sizes, shuffles and votes of blocks and tiles are CUDA's", "[cooperative-groups]") {
    const dim3 block = GENERATE(dim3(32), dim3(64), dim3(16, 4));
    const unsigned threads = block.x * block.y;
    CAPTURE(block.x, block.y);
    DeviceBuffer<int> d_out(17 * size_t(threads));
    kernels::groupMembers<<<1, block>>>(d_out.data());
    KL_CHECK_LAUNCH();
    const auto out = d_out.download();
    auto value = [](unsigned rank) { return int(rank) * 10 + 1; };
    int total = 0;
    for (unsigned r = 0; r < threads; r++) { total += value(r); }
    for (unsigned r = 0; r < threads; r++) {
        const int* mine = out.data() + 17 * r;
        const unsigned lane = r % 16, base = r - lane, eighth = r % 8;
        CAPTURE(r);
        CHECK(mine[0] == int(r % 32 + 100 * (r / 32) + 10000 * (threads / 32)));
        CHECK(mine[1] == int(lane + 100 * (r % 32 / 16) + 10000 * 2));
        CHECK(mine[2] == int(eighth + 100 * (lane / 8) + 10000 * 2));
        CHECK(mine[3] == 16 + 8);
        CHECK(mine[4] == value(base + 3));
        CHECK(mine[5] == value(r));
        CHECK(mine[6] == value(lane + 2 < 16 ? r + 2 : r));
        CHECK(mine[7] == value(lane >= 2 ? r - 2 : r));
        CHECK(mine[8] == value(base + (lane ^ 5)));
        unsigned ballot = 0;
        for (unsigned l = 0; l < 16; l++) { ballot |= unsigned(value(base + l) % 3 == 0) << l; }
        CHECK(unsigned(mine[9]) == ballot);
        CHECK(mine[10] == 1 + 2 + 0);
        int eighth_sum = 0;
        for (unsigned l = r - eighth; l < r - eighth + 8; l++) { eighth_sum += value(l); }
        CHECK(mine[11] == eighth_sum);
        CHECK(mine[12] == int(threads + 10000 * threads));
        if (r == 0) { CHECK(mine[13] == total); }
        CHECK(mine[14] == int(lane + 100 * 16));
        if (lane == 0) {
            int sixteen_sum = 0;
            for (unsigned l = r; l < r + 16; l++) { sixteen_sum += value(l); }
            CHECK(mine[15] == sixteen_sum);
            CHECK(mine[16] == sixteen_sum);
        }
    }
}

TEST_CASE("Cooperative groups: misuse is reported at the student's line", "[cooperative-groups]") {
    DeviceBuffer<int> d_out(64);
    SECTION("a tile shuffle within a block of whole tiles is fine") {
        kernels::shuffleBeyondTheBlock<<<1, 64>>>(d_out.data());
        KL_CHECK_LAUNCH();
        const auto out = d_out.download();
        for (int t = 0; t < 64; t++) { CHECK(out[t] == (t % 32 + 8 < 32 ? t + 8 : t)); }
    }
    SECTION("a tile shuffle from a rank that no thread of the block has") {
        requireFinding([&] { kernels::shuffleBeyondTheBlock<<<1, 48>>>(d_out.data()); }, FindingKind::CollectiveMisuse,
                       kernels::sourceFile(), "beyond-the-block");
    }
    SECTION("block.sync() where other threads wait at __syncthreads()") {
        requireFinding([&] { kernels::blockSyncBesideSyncthreads<<<1, 64>>>(d_out.data()); },
                       FindingKind::BarrierDivergence, kernels::sourceFile(), "diverging-block-sync");
    }
}

}  // namespace
