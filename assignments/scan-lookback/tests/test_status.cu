// Task status: publishStatus and readStatus pass a tile's value from one block to another, the value
// visible before its flag, the flag read afresh while waiting.
#include "lookback_testing.cuh"

using kernellab::DeviceBuffer;
using lookback::SlowAdd;
using lookback::SlowInt;

namespace {

/**
 * Block 0 publishes tile t's value `values[t]` (even tiles as aggregates, odd as prefixes) through
 * publishStatus, each value store taking ~40 ms (SlowInt); block 1 reads every tile through
 * readStatus as soon as it can. Both blocks run at once (on the CPU backend, on two OS threads).
 */
__global__ void passValues(TileStatus<SlowAdd> status, uint32_t tiles, const int* d_values, uint32_t* d_seen_flags,
                           int* d_seen_values, uint32_t* d_done) {
    if (threadIdx.x != 0) { return; }
    if (blockIdx.x == 0) {
        for (uint32_t t = 0; t < tiles; t++) {
            publishStatus<SlowAdd>(status, t, t % 2 == 0 ? STATUS_AGGREGATE : STATUS_PREFIX, SlowInt(d_values[t]));
        }
        lookback::awaitOrStop(d_done, "readStatus never returned, although every tile was published");
        return;
    }
    for (uint32_t t = 0; t < tiles; t++) {
        SlowInt value(0);
        d_seen_flags[t] = readStatus<SlowAdd>(status, t, value);
        d_seen_values[t] = value.value;
    }
    *static_cast<volatile uint32_t*>(d_done) = 1;
}

/**
 * Block 1 waits in readStatus for a tile that block 0 publishes (with plain volatile stores and a
 * fence: the test's own, not publishStatus) only ~40 ms after block 1 said it starts waiting: a
 * readStatus that reads the flag once never sees it.
 */
__global__ void publishLate(TileStatus<SlowAdd> status, int value, uint32_t* d_seen_flag, int* d_seen_value,
                            uint32_t* d_waiting, uint32_t* d_done) {
    if (threadIdx.x != 0) { return; }
    if (blockIdx.x == 0) {
        lookback::awaitOrStop(d_waiting, "the reading block never started");
        lookback::pauseTicks(40000000);
        static_cast<volatile int*>(&status.aggregates[0].value)[0] = value;
        __threadfence();
        static_cast<volatile uint32_t*>(status.flags)[0] = STATUS_AGGREGATE;
        lookback::awaitOrStop(d_done, "readStatus waits for a flag published 4 s ago: it reads a copy of the flag "
                                      "taken before (a read that is not volatile or atomic)");
        return;
    }
    *static_cast<volatile uint32_t*>(d_waiting) = 1;
    SlowInt seen(0);
    *d_seen_flag = readStatus<SlowAdd>(status, 0, seen);
    *d_seen_value = seen.value;
    *static_cast<volatile uint32_t*>(d_done) = 1;
}

}  // namespace

TEST_CASE("readStatus returns the flag and the value that publishStatus published in another block", "[status]") {
    const uint32_t tiles = GENERATE(1u, 2u, 5u);
    const uint64_t seed  = 5000 + tiles;
    KL_CAPTURE(tiles, seed);
    const std::vector<int> values = kernellab::randomInts(tiles, seed, 1, 1000000);

    lookback::DeviceStatus<SlowAdd> status(tiles);
    DeviceBuffer<int> d_values(values);
    DeviceBuffer<uint32_t> d_seen_flags(tiles), d_done(std::vector<uint32_t>{0});
    DeviceBuffer<int> d_seen_values(tiles);
    passValues<<<2, 32>>>(status.view(), tiles, d_values.data(), d_seen_flags.data(), d_seen_values.data(),
                          d_done.data());
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_seen_flags.download(), [&] {
        std::vector<uint32_t> flags;
        for (uint32_t t = 0; t < tiles; t++) { flags.push_back(t % 2 == 0 ? STATUS_AGGREGATE : STATUS_PREFIX); }
        return flags;
    }(), std::equal_to<uint32_t>{}, kernellab::Layout{});
    KL_REQUIRE_EQUAL(d_seen_values.download(), values, std::equal_to<int>{}, kernellab::Layout{});
}

TEST_CASE("readStatus waits for a flag published after it started waiting", "[status]") {
    const uint64_t seed = GENERATE(1u, 2u);
    KL_CAPTURE(seed);
    const int value = kernellab::randomInts(1, seed, 1, 1000000)[0];

    lookback::DeviceStatus<SlowAdd> status(1);
    DeviceBuffer<uint32_t> d_seen_flag(1), d_waiting(std::vector<uint32_t>{0}), d_done(std::vector<uint32_t>{0});
    DeviceBuffer<int> d_seen_value(1);
    publishLate<<<2, 32>>>(status.view(), value, d_seen_flag.data(), d_seen_value.data(), d_waiting.data(),
                           d_done.data());
    KL_CHECK_LAUNCH();
    KL_REQUIRE_EQUAL(d_seen_flag.download(), std::vector<uint32_t>{STATUS_AGGREGATE}, std::equal_to<uint32_t>{},
                     kernellab::Layout{});
    KL_REQUIRE_EQUAL(d_seen_value.download(), std::vector<int>{value}, std::equal_to<int>{}, kernellab::Layout{});
}
