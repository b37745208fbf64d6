// The file students edit: a single-pass inclusive scan with decoupled look-back (Merrill and
// Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA 2016).
//
// pbb's scanInc reads its input twice and writes its partial results in between (three
// passes). Here every block scans one tile of the input and learns the reduction of all tiles
// before it from those tiles' status words, published while they run: the input is read once
// and the result written once, as a copy does.
//
// A tile goes through three states, in its status word:
//   STATUS_INVALID   nothing published yet;
//   STATUS_AGGREGATE `aggregates[tile]` holds the reduction of the tile alone (published as soon
//                    as the tile is reduced, so that later tiles need not wait for its look-back);
//   STATUS_PREFIX    `prefixes[tile]` holds the reduction of tiles 0 .. tile (inclusive).
// A tile publishes its aggregate while it looks back over its predecessors, nearest first,
// folding their aggregates until it meets a prefix; then it publishes its own prefix.
//
// Tasks, in the order the kernel uses them (search for TASK): tile-id, status, look-back, scan.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>
#include "operators.cu.h"

#define WARP   (32)
#define lgWARP (5)

/** A tile's state, in its status flag: each state is published once, in this order. */
enum : uint32_t { STATUS_INVALID = 0, STATUS_AGGREGATE = 1, STATUS_PREFIX = 2 };

/**
 * The status words of the tiles, in device memory: per tile its flag and the two values the
 * flags announce. The host zeroes the flags (STATUS_INVALID) before every scan.
 */
template<class OP>
struct TileStatus {
    uint32_t* flags;
    typename OP::RedElTp* aggregates;
    typename OP::RedElTp* prefixes;
};

/*****************************************/
/*** 1. Tile ids                       ***/
/*****************************************/

/**
 * TASK tile-id: the tile this block scans.
 *
 * Called by every thread of the block, once, at the start of the kernel; returns the same tile
 * id to all of them. `*d_counter` starts at the first tile id of the scan (0) and each block
 * takes the next one: tile ids follow the order in which blocks START, one block one tile.
 *
 * Why not `blockIdx.x`: a tile waits for its predecessors' status. CUDA starts blocks in no
 * promised order, and only as earlier blocks leave room on the GPU. Had block 7 scanned tile 7,
 * it could start before block 6, fill the last free slot of the GPU and wait forever for tile 6,
 * whose block cannot start until some running block ends. With ids taken at the start, every
 * tile with a smaller id belongs to a block that has already started, so it can finish.
 *
 * Constraint: one atomic operation per block, by one thread, shared with the others through
 * shared memory (all threads must see it before any uses it).
 */
__device__ inline uint32_t acquireTile(uint32_t* d_counter) {
    __shared__ uint32_t tile;
    (void)d_counter;
    (void)tile;
    return blockIdx.x;
}

/*****************************************/
/*** 2. Status words                   ***/
/*****************************************/

/**
 * TASK status (1 of 2): publish `value` as tile `tile`'s aggregate (`flag` == STATUS_AGGREGATE,
 * into `aggregates`) or inclusive prefix (STATUS_PREFIX, into `prefixes`). Called by one thread.
 *
 * Another block may read the flag at any moment, and reads the value as soon as it sees the flag,
 * so the value must be visible to every block before the flag is. Neither the compiler nor the
 * GPU keeps two stores in program order for another block to see: CUDA orders them only across a
 * fence. So: write the value, then `__threadfence()`, then the flag. Write both through
 * `volatile` (or atomic) accesses, so that the compiler really stores them to memory here.
 */
template<class OP>
__device__ inline void publishStatus(TileStatus<OP> status, uint32_t tile, uint32_t flag,
                                     const typename OP::RedElTp& value) {
    volatile typename OP::RedElTp* values = flag == STATUS_PREFIX ? status.prefixes : status.aggregates;
    volatile uint32_t* flags = status.flags;
    // Missing: publish the value, then the flag, with the order between them kept.
    (void)values;
    (void)flags;
}

/**
 * TASK status (2 of 2): wait until tile `tile` has published something, then return its flag
 * and put the value that the flag announces into `value`. Called by one thread (each lane of
 * the look-back reads its own tile).
 *
 * Read the flag through a `volatile` (or atomic) access, every time: a plain read may be done
 * once, by the compiler, and the loop then spins on that stale copy forever. After seeing the
 * flag, `__threadfence()`, then read the value (volatile too): the fence keeps the value read
 * from being done before the flag read, which would return what the memory held before the
 * publishing block's store. The tile will publish: it started before this one (tile-id).
 */
template<class OP>
__device__ inline uint32_t readStatus(TileStatus<OP> status, uint32_t tile, typename OP::RedElTp& value) {
    volatile typename OP::RedElTp* aggregates = status.aggregates;
    volatile typename OP::RedElTp* prefixes = status.prefixes;
    volatile uint32_t* flags = status.flags;
    // Missing: wait for the flag, then read the value it announces.
    (void)aggregates;
    (void)prefixes;
    (void)flags;
    value = OP::identity();
    return STATUS_PREFIX;
}

/*****************************************/
/*** 3. Look-back                      ***/
/*****************************************/

/**
 * TASK look-back: the reduction of tiles 0 .. tile-1 (the tile's exclusive prefix), from their
 * status words. Called by the 32 lanes of the block's first warp, for `tile` > 0, once the tile
 * is reduced (its aggregate is published beside this call, or before it); lane 0 returns the
 * result (the other lanes' results are not used). `window` is WARP elements of shared memory for
 * the warp's use.
 *
 * Algorithm: the warp inspects a window of 32 predecessors at a time, lane 31 the nearest
 * (tile - 1), lane 0 the farthest; a lane whose predecessor would lie before tile 0 counts as
 * a prefix of `OP::identity()`. Each lane waits for its tile's status (readStatus). If some lane
 * holds a PREFIX, the nearest such lane `p` ends the look-back: the result is, in tile order,
 * the value of lane p, then the aggregates of lanes p+1 .. 31, then what earlier windows folded.
 * Otherwise the whole window (32 aggregates) is folded in and the window moves 32 tiles back.
 *
 * Why not stop at the first aggregate: an aggregate covers one tile only; the tiles before it
 * are still missing. Why it need not wait for the predecessor's prefix (as a chained scan
 * does): a predecessor publishes its aggregate without waiting for its own look-back, so every
 * wait here ends as soon as the tiles of the window are reduced, not when all tiles before them
 * are scanned.
 *
 * Constraints: the tile given, not `blockIdx.x` (see tile-id); `OP` need not be commutative
 * (Mssp), so keep the earlier tiles on the left of every application.
 */
template<class OP>
__device__ inline typename OP::RedElTp
lookBack(TileStatus<OP> status, uint32_t tile, volatile typename OP::RedElTp* window) {
    const uint32_t lane = threadIdx.x & (WARP - 1);
    typename OP::RedElTp exclusive = OP::identity();
    // Missing: fold the predecessors' status into `exclusive`.
    (void)status;
    (void)tile;
    (void)window;
    (void)lane;
    return exclusive;
}

/*****************************************/
/*** 4. The scan                       ***/
/*****************************************/

/** The elements one thread scans sequentially: about 92 bytes of them. Large tiles keep the
 *  look-back's cost small against a tile's work (in blocks of 1024 on an H100, 23 ints a thread
 *  ran at 0.89x CUB, 15 at 0.79x: docs/performance.md); an odd count of ints keeps a warp's
 *  strided shared-memory reads on 32 different banks. */
template<class OP>
constexpr uint32_t itemsPerThread() {
#ifdef LOOKBACK_ITEM_BYTES
    constexpr uint32_t bytes = LOOKBACK_ITEM_BYTES;
#else
    constexpr uint32_t bytes = 92;
#endif
    return bytes / sizeof(typename OP::RedElTp) > 0 ? bytes / sizeof(typename OP::RedElTp) : 1;
}

/**
 * Given: inclusive scan of one element per lane by one warp, as pbb's scanIncWarp, in lg(WARP)
 * steps through `ptr` (WARP elements of shared memory for this warp alone). Returns the lane's
 * element of the scan and leaves the scan in `ptr`.
 */
template<class OP>
__device__ inline typename OP::RedElTp scanWarp(volatile typename OP::RedElTp* ptr, const uint32_t lane,
                                                typename OP::RedElTp value) {
    ptr[lane] = value;
    __syncwarp();
    for (uint32_t h = 1; h < WARP; h <<= 1) {
        if (lane >= h) { value = OP::apply(OP::remVolatile(ptr[lane - h]), value); }
        __syncwarp();
        ptr[lane] = value;
        __syncwarp();
    }
    return value;
}

/**
 * TASK scan: the kernel. Each block scans one tile of `blockDim.x * ITEMS` consecutive elements
 * of `d_in` (mapped with `OP::mapFun`) into `d_out`, the last tile padded with `OP::identity()`
 * past `n`. Each warp owns WARP * ITEMS consecutive elements of the tile, each lane ITEMS
 * consecutive ones of its warp's. Dynamic shared memory: `shmem` holds the tile, then one element
 * per thread, then WARP (the warps' totals), then WARP + 1 (the look-back's window and the tile's
 * exclusive prefix).
 *
 * Steps: 1. take the tile (acquireTile); 2. each warp loads its elements, coalesced, into its
 * part of the tile; 3. each lane reduces its ITEMS elements, and the warp scans those lane sums
 * (scanWarp); the last lane's result is the warp's total; 4. after a barrier the second warp scans
 * the warps' totals (the last is the tile's aggregate) and publishes the aggregate (tile 0: its
 * prefix), while the first warp looks back (lookBack); after a second barrier one thread publishes
 * the tile's inclusive prefix; 5. every lane scans its ITEMS elements starting from the tile's
 * exclusive prefix, then the totals of the warps before its own, then the sums of the lanes before
 * it; 6. each warp writes its elements back, coalesced.
 *
 * Why a warp owns its elements: steps 2, 3, 5 and 6 need only `__syncwarp()`, so a warp goes on
 * as soon as its own loads arrive, and a tile costs two block barriers after acquireTile. Every
 * barrier waits for the block's slowest warp, and while a block waits it has no loads in flight.
 *
 * Constraint: the aggregate is published without waiting for the look-back (by another warp, or
 * before it in a block of one warp), so that later tiles never wait for this tile's look-back
 * (see lookBack). `OP` need not be commutative.
 */
template<class OP, uint32_t ITEMS>
__global__ void scanLookbackKernel(typename OP::RedElTp* d_out, const typename OP::InpElTp* d_in, uint32_t n,
                                   TileStatus<OP> status, uint32_t* d_counter) {
    typedef typename OP::RedElTp T;
    extern __shared__ uint4 shmem[];  // uint4: aligned for any element of up to 16 bytes
    volatile T* elems = reinterpret_cast<volatile T*>(shmem);
    volatile T* sums = elems + blockDim.x * ITEMS;
    volatile T* totals = sums + blockDim.x;
    volatile T* window = totals + WARP;  // WARP elements, then the tile's exclusive prefix
    const uint32_t tid = threadIdx.x;
    const uint32_t lane = tid & (WARP - 1);
    const uint32_t warp = tid >> lgWARP;
    const uint32_t warps = blockDim.x >> lgWARP;
    // Missing: the kernel's body.
    (void)d_out;
    (void)d_in;
    (void)n;
    (void)status;
    (void)d_counter;
    (void)elems;
    (void)sums;
    (void)totals;
    (void)window;
    (void)lane;
    (void)warp;
    (void)warps;
}

/*****************************************/
/*** 5. Host                           ***/
/*****************************************/

/** Bytes of `d_scratch` that scanLookback needs for `n` elements in blocks of `block` threads. */
template<class OP>
inline size_t scanLookbackScratchBytes(uint32_t block, uint32_t n) {
    const size_t tiles = (size_t(n) + size_t(block) * itemsPerThread<OP>() - 1) / (size_t(block) * itemsPerThread<OP>());
    const size_t flags = (tiles * sizeof(uint32_t) + 15) / 16 * 16;
    return 16 + flags + 2 * tiles * sizeof(typename OP::RedElTp);
}

/**
 * Given: the inclusive scan of `d_in[0 .. n)` (mapped with `OP::mapFun`) into `d_out`, in blocks
 * of `block` threads (a multiple of WARP, up to 1024), one kernel. `d_scratch` holds
 * scanLookbackScratchBytes<OP>(block, n) bytes: the tile counter, then the tiles' flags, aggregates
 * and prefixes. Only the counter and the flags are cleared; the values are written before use.
 */
template<class OP>
void scanLookback(uint32_t block, uint32_t n, typename OP::RedElTp* d_out, const typename OP::InpElTp* d_in,
                  void* d_scratch) {
    if (n == 0) { return; }
    constexpr uint32_t items = itemsPerThread<OP>();
    const uint32_t tiles = uint32_t((uint64_t(n) + uint64_t(block) * items - 1) / (uint64_t(block) * items));
    char* scratch = static_cast<char*>(d_scratch);
    uint32_t* d_counter = reinterpret_cast<uint32_t*>(scratch);
    const size_t flag_bytes = (size_t(tiles) * sizeof(uint32_t) + 15) / 16 * 16;
    TileStatus<OP> status;
    status.flags = reinterpret_cast<uint32_t*>(scratch + 16);
    status.aggregates = reinterpret_cast<typename OP::RedElTp*>(scratch + 16 + flag_bytes);
    status.prefixes = status.aggregates + tiles;
    cudaMemsetAsync(scratch, 0, 16 + flag_bytes);
    const size_t shmem = (size_t(block) * (items + 1) + 2 * WARP + 1) * sizeof(typename OP::RedElTp);
    // Room for acquireTile's static shared tile id too, which the CPU backend counts in the same limit.
    constexpr int kStaticShared = 64;
    cudaFuncSetAttribute(scanLookbackKernel<OP, items>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         int(shmem) + kStaticShared);
    scanLookbackKernel<OP, items><<<tiles, block, shmem>>>(d_out, d_in, n, status, d_counter);
}
