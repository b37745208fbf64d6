// Kernels written with CUDA's cooperative groups, for the CPU backend's tests of them
// (test_cooperative_groups.cu). This file includes nothing of kernellab's: where nvcc is
// installed, the build also compiles it with `nvcc -c` (tests/CMakeLists.txt), so what the CPU
// backend accepts here is CUDA's API. A line that a test expects a finding at carries
// `// site: NAME`. (An include guard, not #pragma once: nvcc compiles this file as its main file.)
#ifndef KERNELLAB_CPU_TESTS_COOPERATIVE_GROUPS_KERNELS_CUH
#define KERNELLAB_CPU_TESTS_COOPERATIVE_GROUPS_KERNELS_CUH

#include <climits>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

namespace cooperative_kernels {

namespace cg = cooperative_groups;

/** This file's path as the compiler names it: where the sites below are. */
inline const char* sourceFile() { return __FILE__; }

/** A 16-byte value and an associative operator that is not commutative: x -> a * x + b. */
struct Affine {
    long long a, b;
};
/** `first`, then `second`. */
struct Compose {
    __host__ __device__ Affine operator()(Affine first, Affine second) const {
        return Affine{first.a * second.a, first.b * second.a + second.b};
    }
};

/**
 * Each warp's scans of `in` (0 past `n`), each written where i < n at out[k * n + i]: k = 0 a
 * scan by hand with the tile's shfl_up, 1 cg::inclusive_scan, 2 cg::exclusive_scan, 3 the
 * exclusive scan under cg::greater (not plus: the other way CUDA computes it).
 */
__global__ void warpScans(int* out, const int* in, unsigned n) {
    const cg::thread_block block = cg::this_thread_block();
    const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const unsigned i = block.group_index().x * block.size() + block.thread_rank();
    const int value = i < n ? in[i] : 0;
    int by_hand = value;
    for (unsigned step = 1; step < warp.size(); step *= 2) {
        const int left = warp.shfl_up(by_hand, step);
        if (warp.thread_rank() >= step) { by_hand += left; }
    }
    const int inclusive = cg::inclusive_scan(warp, value);
    const int exclusive = cg::exclusive_scan(warp, value);
    const int exclusive_max = cg::exclusive_scan(warp, value, cg::greater<int>());
    if (i < n) {
        out[i] = by_hand;
        out[n + i] = inclusive;
        out[2 * n + i] = exclusive;
        out[3 * n + i] = exclusive_max;
    }
}

/** Each warp's inclusive scan of `in` under Compose, whose values take two shuffles each. */
__global__ void affineWarpScan(Affine* out, const Affine* in) {
    const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = cg::inclusive_scan(warp, in[i], Compose());
}

/** The block's reduction of `value` under `op` (whose identity is `identity`), in every thread. */
template<class Op>
__device__ int blockReduce(const cg::thread_block& block, int value, Op op, int identity, int* partial) {
    const auto warp = cg::tiled_partition<32>(block);
    const int mine = cg::reduce(warp, value, op);
    if (warp.thread_rank() == 0) { partial[warp.meta_group_rank()] = mine; }
    block.sync();
    const int total = cg::reduce(warp, warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()] : identity, op);
    cg::sync(block);  // `partial` is written again by the next reduction
    return total;
}

/** Each block's reductions of `in` (identities past `n`) at out[6 * block + k]: +, min, max, &, |, ^. */
__global__ void blockReductions(int* out, const int* in, unsigned n) {
    __shared__ int partial[32];
    const cg::thread_block block = cg::this_thread_block();
    const unsigned i = blockIdx.x * block.num_threads() + block.thread_rank();
    const bool inside = i < n;
    const int value = inside ? in[i] : 0;
    int* const mine = out + 6 * blockIdx.x;
    const int results[6] = {
        blockReduce(block, value, cg::plus<int>(), 0, partial),
        blockReduce(block, inside ? value : INT_MAX, cg::less<int>(), INT_MAX, partial),
        blockReduce(block, inside ? value : INT_MIN, cg::greater<int>(), INT_MIN, partial),
        blockReduce(block, inside ? value : -1, cg::bit_and<int>(), -1, partial),
        blockReduce(block, value, cg::bit_or<int>(), 0, partial),
        blockReduce(block, value, cg::bit_xor<int>(), 0, partial),
    };
    if (block.thread_rank() < 6) { mine[block.thread_rank()] = results[block.thread_rank()]; }
}

/**
 * Each block's inclusive scan of `in` (0 past `n`): the warps scan, warp 0 scans the warps'
 * totals, each thread adds its warp's prefix. `synced` false leaves out the barrier between
 * writing the totals and reading them: a race.
 */
__global__ void blockScan(int* out, const int* in, unsigned n, bool synced) {
    __shared__ int totals[32];
    const cg::thread_block block = cg::this_thread_block();
    const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const unsigned i = block.group_index().x * block.dim_threads().x + block.thread_index().x;
    const int scanned = cg::inclusive_scan(warp, i < n ? in[i] : 0);
    if (warp.thread_rank() == warp.num_threads() - 1) { totals[warp.meta_group_rank()] = scanned; }
    if (synced) { block.sync(); }
    if (warp.meta_group_rank() == 0) {
        const bool warp_total = warp.thread_rank() < warp.meta_group_size();
        const int prefix = cg::exclusive_scan(warp, warp_total ? totals[warp.thread_rank()] : 0);
        if (warp_total) { totals[warp.thread_rank()] = prefix; }
    }
    block.sync();
    if (i < n) { out[i] = scanned + totals[warp.meta_group_rank()]; }
}

/** The CUDA programming guide's reduction over any thread_group: rank 0 gets the sum. */
__device__ int reduceSum(cg::thread_group g, int* temp, int value) {
    const unsigned lane = unsigned(g.thread_rank());
    for (unsigned i = unsigned(g.size()) / 2; i > 0; i /= 2) {
        temp[lane] = value;
        g.sync();
        if (lane < i) { value += temp[lane + i]; }
        g.sync();
    }
    return value;
}

/**
 * What a thread sees of its groups, at out[17 * rank + k] (rank in the block; one block of 32 or
 * 64 threads, which reduceSum needs a power of two of): its ranks and sizes in a tile of 32, of
 * 16 and of 8 (within the tile of 16), the tile of 16's shuffles, votes and ballot, and sums as
 * thread_groups over the whole block, over tiles of 16 partitioned at run time and over the tile
 * of 16 (reduceSum ends at a barrier of its group: the next may reuse temp).
 */
__global__ void groupMembers(int* out) {
    __shared__ int temp[64];
    const cg::thread_block block = cg::this_thread_block();
    const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const cg::thread_block_tile<16> half = cg::tiled_partition<16>(warp);
    const auto eighth = cg::tiled_partition<8>(half);
    const unsigned rank = block.thread_rank();
    const int value = int(rank) * 10 + 1;
    int* const mine = out + 17 * rank;
    mine[0] = int(warp.thread_rank()) + 100 * int(warp.meta_group_rank()) + 10000 * int(warp.meta_group_size());
    mine[1] = int(half.thread_rank()) + 100 * int(half.meta_group_rank()) + 10000 * int(half.meta_group_size());
    mine[2] = int(eighth.thread_rank()) + 100 * int(eighth.meta_group_rank()) + 10000 * int(eighth.meta_group_size());
    mine[3] = int(half.num_threads() + eighth.size());
    mine[4] = half.shfl(value, 3);
    mine[5] = half.shfl(value, int(half.thread_rank()) + 16);  // a rank taken modulo the tile's size
    mine[6] = half.shfl_down(value, 2);
    mine[7] = half.shfl_up(value, 2);
    mine[8] = half.shfl_xor(value, 5);
    mine[9] = int(half.ballot(value % 3 == 0));
    mine[10] = half.any(half.thread_rank() == 15) + 2 * half.all(value > 0) + 4 * eighth.all(eighth.thread_rank() < 4);
    mine[11] = cg::reduce(eighth, value, cg::plus<int>());
    const cg::thread_group whole = block;
    mine[12] = int(whole.size()) + 10000 * int(cg::group_size(block));
    mine[13] = reduceSum(whole, temp, value);
    const cg::thread_group sixteen = cg::tiled_partition(block, 16);
    mine[14] = int(sixteen.thread_rank()) + 100 * int(sixteen.size());
    mine[15] = reduceSum(sixteen, temp + rank / 16 * 16, value);
    mine[16] = reduceSum(half, temp + rank / 16 * 16, value);
}

/**
 * A block of 48 threads whose second tile of 32 holds 16: its lane 8 reads rank 16, which no
 * thread has. Blocks that are a multiple of 32 threads are right.
 */
__global__ void shuffleBeyondTheBlock(int* out) {
    const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    out[threadIdx.x] = warp.shfl_down(int(threadIdx.x), 8);  // site: beyond-the-block
}

/** Warp 0 waits at block.sync(), the others at __syncthreads(): barrier divergence. */
__global__ void blockSyncBesideSyncthreads(int* out) {
    const cg::thread_block block = cg::this_thread_block();
    if (block.thread_rank() < 32) {
        block.sync();  // site: diverging-block-sync
    } else {
        __syncthreads();
    }
    out[block.thread_rank()] = 1;
}

}  // namespace cooperative_kernels

#endif  // KERNELLAB_CPU_TESTS_COOPERATIVE_GROUPS_KERNELS_CUH
