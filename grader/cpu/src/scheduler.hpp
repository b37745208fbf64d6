// The scheduler's interface to the rest of the runtime (runtime.cpp): thread orders and
// running all blocks of a launch in one of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include "kernellab_cpu/finding.hpp"
#include "kernellab_cpu/launch.hpp"

namespace kernellab::cpu {

/**
 * The orders in which a launch's threads (and blocks) run. The first three are the ones every
 * launch runs under; the last two separate a race inside a warp from one between warps.
 */
enum class OrderKind { Ascending, Descending, Random, LanesReversed, WarpsReversed };

/** The threads of a block (linear indices) in the order they start and are released. */
struct BlockOrder {
    BlockOrder(OrderKind kind, unsigned count, uint64_t seed);
    std::vector<unsigned> threads;
    std::vector<unsigned> lanes;  // the lanes of a warp, in the order that the threads give them
    std::vector<unsigned> warps;  // the block's warps, in the order that the threads give them
};

/**
 * Runs every block of the launch; `workers` OS threads take blocks in the order's sequence.
 * `lockstep`: whether lockstepStep keeps a warp's lanes in step (a launch that accepts the
 * lockstep idiom); the result tells whether it held any lane.
 */
bool runGrid(const LaunchRequest& request, OrderKind kind, uint64_t seed, unsigned workers, bool lockstep);

/** Whether the launch accepts the lockstep idiom: its warp_synchronous mode is "warn". */
bool acceptsLockstep(const LaunchRequest& request);

/** "file:line". */
std::string at(Site site);

/** The most shared memory (static plus dynamic) one block may use now. */
size_t maxSharedPerBlock();

}  // namespace kernellab::cpu
