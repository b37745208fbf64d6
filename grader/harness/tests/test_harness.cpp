// The harness's own tests: they need no GPU and run everywhere, CI included.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <unistd.h>
#include "kernellab/catch.hpp"
#include "kernellab/compare.hpp"
#include "kernellab/grader_commands.hpp"
#include "kernellab/inputs.hpp"

using namespace kernellab;

namespace {

/** A pipe, as the grader's to a speed program. */
struct CommandPipe {
    int ends[2] = {-1, -1};
    CommandPipe() { REQUIRE(pipe(ends) == 0); }
    ~CommandPipe() {
        close(ends[0]);
        if (ends[1] != -1) { close(ends[1]); }
    }
    void write(const std::string& text) const { REQUIRE(::write(ends[1], text.data(), text.size()) == ssize_t(text.size())); }
    void closeWriteEnd() { close(ends[1]); ends[1] = -1; }
};

double threadCpuSeconds() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

}  // namespace

TEST_CASE("whereIs names the block, warp and lane that own an element", "[harness]") {
    CHECK(whereIs(0, Layout{256, 256}) == "block 0, warp 0, lane 0 (thread 0)");
    CHECK(whereIs(256 + 33, Layout{256, 256}) == "block 1, warp 1, lane 1 (thread 33)");
    // Three consecutive elements per thread, two passes per block of 64 threads.
    CHECK(whereIs(3 * 64 + 3 * 40 + 2, Layout{64, 2 * 3 * 64, 3}) == "block 0, warp 1, lane 8 (thread 40)");
    CHECK(whereIs(5, Layout{}) == "thread chosen by the host wrapper");
}

TEST_CASE("describeMismatch reports the first differing index, both values and the count", "[harness]") {
    const std::vector<int> host{1, 2, 3, 4, 5};
    CHECK(describeMismatch(host, host, std::equal_to<int>{}, Layout{32, 32}).empty());
    const std::vector<int> device{1, 2, 9, 4, 7};
    CHECK(describeMismatch(device, host, std::equal_to<int>{}, Layout{32, 32})
          == "first mismatch at index 2 (block 0, warp 0, lane 2 (thread 2)): device 9, host 3; 2 of 5 elements differ");
    CHECK(describeMismatch(std::vector<int>{1}, host, std::equal_to<int>{}, Layout{32, 32})
          == "device result has 1 elements, host model 5");
}

TEST_CASE("randomInts is reproducible from its seed and never all zero", "[harness]") {
    const size_t n = GENERATE(1u, 2u, 1000u);
    CAPTURE(n);
    CHECK(randomInts(n, 7, -3, 3) == randomInts(n, 7, -3, 3));
    for (uint64_t seed = 1; seed <= 100; seed++) {
        const auto values = randomInts(n, seed, -1, 1);
        CHECK(std::any_of(values.begin(), values.end(), [](int v) { return v != 0; }));
    }
}

TEST_CASE("hostileSizes covers the boundaries of warps, blocks and powers of two", "[harness]") {
    const auto sizes = hostileSizes();
    for (uint32_t n : {1u, 31u, 32u, 33u, 1023u, 1024u, 1025u, 8191u, 8193u, 1000003u}) {
        CAPTURE(n);
        CHECK(std::find(sizes.begin(), sizes.end(), n) != sizes.end());
    }
}

TEST_CASE("the grader narrows sizes and block sizes through the environment", "[harness]") {
    CHECK(blockSizes() == std::vector<uint32_t>{32, 64, 128, 256, 512, 1024});
    setenv("KERNELLAB_SIZES", "1025", 1);
    setenv("KERNELLAB_BLOCK_SIZES", "32,1024", 1);
    CHECK(hostileSizes() == std::vector<uint32_t>{1025});
    CHECK(blockSizes() == std::vector<uint32_t>{32, 1024});
    unsetenv("KERNELLAB_SIZES");
    unsetenv("KERNELLAB_BLOCK_SIZES");
}

TEST_CASE("sizeAndBlockCases crosses small sizes with every block size and gives each large size one in turn", "[harness]") {
    const auto blocks = blockSizes();
    std::vector<uint32_t> blocks_of_large_sizes;
    for (const uint32_t n : hostileSizes()) {
        CAPTURE(n);
        std::vector<uint32_t> paired;
        for (const auto& one : sizeAndBlockCases()) {
            if (one.n == n) { paired.push_back(one.block); }
        }
        if (n <= (1u << 16)) {
            CHECK(paired == blocks);
        } else {
            REQUIRE(paired.size() == 1);
            blocks_of_large_sizes.push_back(paired[0]);
        }
    }
    // 2^17-1, 2^17+1, 2^20+1, 1000003: the smallest block, the largest, the second smallest, ...
    CHECK(blocks_of_large_sizes == std::vector<uint32_t>{32, 1024, 64, 512});
    setenv("KERNELLAB_SIZES", "20,70000", 1);
    const auto hidden = sizeAndBlockCases();
    unsetenv("KERNELLAB_SIZES");
    CHECK(hidden.size() == blocks.size() + 1);
    CHECK((hidden.back().n == 70000 && hidden.back().block == 32));
}

TEST_CASE("randomFlags sets about one flag per mean segment length", "[harness]") {
    const auto flags = randomFlags(100000, 3, 10);
    const auto set = std::count(flags.begin(), flags.end(), 1);
    CHECK(set > 9000);
    CHECK(set < 11000);
}

TEST_CASE("summationErrorBound is gamma_h times the sum of magnitudes", "[harness]") {
    const std::vector<float> values{1.0f, -2.0f, 3.0f, -4.0f};
    const double u = std::ldexp(1.0, -24);
    const double reference_part = 4 * std::ldexp(1.0, -53) / (1 - 4 * std::ldexp(1.0, -53)) * 10.0;
    const double expected = 2 * u / (1 - 2 * u) * 10.0 + reference_part;
    CHECK(std::fabs(summationErrorBound(values, 2) - expected) <= 1e-12 * expected);
    CHECK(summationErrorBound(values, 4) > summationErrorBound(values, 2));
}

TEST_CASE("describeOutOfBound reports the first element past its bound, the difference and the bound", "[harness]") {
    const std::vector<double> expected{1.0, 2.0, 3.0}, bound{0.5, 0.5, 0.5};
    CHECK(describeOutOfBound(std::vector<float>{1.25f, 2.5f, 2.75f}, expected, bound, Layout{}).empty());
    CHECK(describeOutOfBound(std::vector<float>{1.0f, 2.75f, 4.0f}, expected, bound, Layout{})
          == "first element out of bound at index 1 (thread chosen by the host wrapper): device 2.75, host (float64) 2, "
             "|difference| 0.75 > bound 0.5; 2 of 3 elements out of bound");
    CHECK_FALSE(describeOutOfBound(std::vector<float>{std::nanf(""), 2.0f, 3.0f}, expected, bound, Layout{}).empty());
}

TEST_CASE("randomFloats is reproducible from its seed and stays in its range", "[harness]") {
    const size_t n = GENERATE(1u, 1000u);
    CAPTURE(n);
    CHECK(randomFloats(n, 7, -1.0f, 1.0f) == randomFloats(n, 7, -1.0f, 1.0f));
    const auto values = randomFloats(n, 3, 0.5f, 1.0f);
    CHECK(std::all_of(values.begin(), values.end(), [](float v) { return v >= 0.5f && v < 1.0f; }));
}

TEST_CASE("GraderCommands gives each whole line, however the grader's writes split it, then \"\" once it has gone", "[harness]") {
    const bool spin = GENERATE(true, false);
    CAPTURE(spin);
    CommandPipe commands;
    GraderCommands reader(commands.ends[0], spin);
    REQUIRE(reader.open());
    commands.write("time 12\nover");
    CHECK(reader.next() == "time 12");
    std::thread grader([&commands] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        commands.write("head 34\nnext\n");
        commands.closeWriteEnd();
    });
    CHECK(reader.next() == "overhead 34");
    grader.join();
    CHECK(reader.next() == "next");
    CHECK(reader.next().empty());
}

TEST_CASE("GraderCommands waits for a late command awake when told to spin, and asleep otherwise or between passes", "[harness]") {
    const bool spin = GENERATE(true, false);
    // Between passes (nextAsleep) no clock runs: a program waiting for its next pass spins on no core.
    const bool betweenPasses = GENERATE(false, true);
    CAPTURE(spin, betweenPasses);
    CommandPipe commands;
    GraderCommands reader(commands.ends[0], spin);
    std::thread grader([&commands] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        commands.write("next\n");
    });
    const double before = threadCpuSeconds();
    const std::string command = betweenPasses ? reader.nextAsleep() : reader.next();
    const double cpuSeconds = threadCpuSeconds() - before;
    grader.join();
    CAPTURE(cpuSeconds);
    CHECK(command == "next");
    // Awake, the wait costs its share of a core even on a busy machine; asleep, next to nothing.
    CHECK((spin && !betweenPasses ? cpuSeconds >= 0.025 : cpuSeconds < 0.005));
}

TEST_CASE("GraderCommands on a descriptor that is not open says so", "[harness]") {
    CommandPipe commands;
    CHECK(GraderCommands(commands.ends[0], true).open());
    CHECK_FALSE(GraderCommands(-1, true).open());
}
