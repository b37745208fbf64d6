// The count of block barriers a thread passes (kernellab::barriersPassed), the same on a GPU (the
// counted intrinsics of kernellab/count_barriers.hpp, included first as a test of a task must)
// and on the CPU backend (its runtime counts every barrier).
#include "kernellab/count_barriers.hpp"
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>
#include <cuda_runtime.h>
#if !KERNELLAB_CPU_BACKEND
#include <cooperative_groups.h>
#endif
#include "kernellab/catch.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"

using kernellab::DeviceBuffer;

namespace {

/** Each thread writes the barriers it passed between its two reads of the count. */
__global__ void passEveryKind(uint32_t* d_passed, int* d_reduced) {
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t before = kernellab::barriersPassed();
    __syncthreads();
    const int count = __syncthreads_count(threadIdx.x % 2);
    const int all = __syncthreads_and(1);
    const int any = __syncthreads_or(threadIdx.x == 0);
    __syncwarp();  // a warp's barrier, not the block's: not counted
#if !KERNELLAB_CPU_BACKEND
    // Spellings that a function-like macro would miss, and the barriers around __syncthreads.
    (__syncthreads)();
    ::__syncthreads();
    __barrier_sync(0);
    const int counted = syncthreads_count(threadIdx.x % 2 == 0);
    cooperative_groups::this_thread_block().sync();
    cooperative_groups::sync(cooperative_groups::this_thread_block());
#else
    const int counted = count;
#endif
    d_passed[gid] = kernellab::barriersPassed() - before;
    d_reduced[gid] = count + counted + all + any;
}

/** Counted barriers per thread of `blocks` blocks of `block` threads, and the reductions' results. */
std::vector<uint32_t> passedByEachThread(uint32_t blocks, uint32_t block, bool counter, std::vector<int>* reduced) {
    const uint32_t threads = blocks * block;
    DeviceBuffer<uint32_t> d_passed(threads);
    DeviceBuffer<int> d_reduced(threads);
    std::optional<kernellab::BarrierCounter> barriers;
    if (counter) { barriers.emplace(threads); }
    passEveryKind<<<blocks, block>>>(d_passed.data(), d_reduced.data());
    KL_CUDA(cudaDeviceSynchronize());
    *reduced = d_reduced.download();
    return d_passed.download();
}

// Every kind this backend has: 4 on the CPU backend, those and 6 more spellings on a GPU.
#if KERNELLAB_CPU_BACKEND
constexpr uint32_t kKinds = 4;
#else
constexpr uint32_t kKinds = 10;
#endif

}  // namespace

TEST_CASE("Every block barrier a thread passes counts once, and the reductions still reduce", "[barriers]") {
    const uint32_t block = GENERATE(32u, 96u, 1024u);
    std::vector<int> reduced;
    const auto passed = passedByEachThread(2, block, true, &reduced);
    CHECK(std::all_of(passed.begin(), passed.end(), [](uint32_t count) { return count == kKinds; }));
    // count + counted + all + any: half the threads each time, then 1 and 1.
    CHECK(std::all_of(reduced.begin(), reduced.end(), [&](int value) { return value == int(block) + 2; }));
}

#if !KERNELLAB_CPU_BACKEND
TEST_CASE("Without a BarrierCounter a GPU counts nothing", "[barriers]") {
    std::vector<int> reduced;
    const auto passed = passedByEachThread(2, 64, false, &reduced);
    CHECK(std::all_of(passed.begin(), passed.end(), [](uint32_t count) { return count == 0; }));
}
#endif
