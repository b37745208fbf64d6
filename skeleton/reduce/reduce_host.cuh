#ifndef REDUCE_HOST_CUH
#define REDUCE_HOST_CUH

// Host wrappers of the reduction ladder: one per rung, all with the same signature,
//
//   template<class OP> void reduceXxx(uint32_t block, uint64_t n, Elem* d_out, const Elem* d_in, Elem* d_scratch);
//
// reducing the `n` elements of `d_in` (device memory, not modified) with operator OP into `*d_out`,
// with `block` threads per block (a power of two from 32 to 1024). `d_scratch` is device memory
// for `reduceScratchElems(n)` elements, which the wrappers use for copies and partial results.
// The wrappers launch asynchronously on the default stream; a bad argument throws
// std::invalid_argument before anything is launched. Rungs 1 to 7 may reorder the elements and
// so need a commutative operator; rung 8 keeps their order and works for any associative one.
// The work stays on the device: the tests count the bytes a wrapper copies from device to host
// memory (`bytes-to-host`, at most one element), and a reduction computed on the host earns nothing.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>
#include "reduce_kernels.cuh"

/** The largest chunk of consecutive elements per thread and tile in rung 8 (odd: see reduceOrdered). */
#define ORDERED_MAX_CHUNK (7)

/** What the wrappers need to know about the current device, queried once. */
struct DeviceFigures {
    uint32_t sms;               // streaming multiprocessors
    uint32_t threads_per_sm;    // resident threads per multiprocessor
    uint32_t blocks_per_sm;     // resident blocks per multiprocessor, whatever their size
    uint32_t shared_per_block;  // shared memory per block without opting in (bytes)
};

inline void checkCudaCall(const cudaError_t status, const std::string& what) {
    if (status != cudaSuccess) {
        throw std::runtime_error(what + " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
    }
}

inline const DeviceFigures& deviceFigures() {
    static const DeviceFigures figures = [] {
        int device = 0;
        cudaDeviceProp prop;
        checkCudaCall(cudaGetDevice(&device), "cudaGetDevice");
        checkCudaCall(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
        return DeviceFigures{uint32_t(prop.multiProcessorCount), uint32_t(prop.maxThreadsPerMultiProcessor),
                             uint32_t(prop.maxBlocksPerMultiProcessor), uint32_t(prop.sharedMemPerBlock)};
    }();
    return figures;
}

/** Elements of scratch memory every wrapper may use for `n` elements: a copy, and two areas of partials. */
inline uint64_t reduceScratchElems(const uint64_t n) { return n + 2 * ((n + WARP - 1) / WARP); }

/** Throws std::invalid_argument, naming the wrapper, unless the arguments are ones the ladder handles. */
inline void checkReduceArguments(const char* wrapper, const uint32_t block, const uint64_t n, const void* d_out,
                                 const void* d_in, const void* d_scratch) {
    const std::string where = std::string(wrapper) + ": ";
    if (block < WARP || block > 1024 || (block & (block - 1)) != 0) {
        throw std::invalid_argument(where + "block size " + std::to_string(block)
                                    + " is not a power of two from 32 to 1024");
    }
    if (n == 0) { throw std::invalid_argument(where + "n is 0: a reduction needs at least one element"); }
    if (d_out == nullptr || d_in == nullptr || d_scratch == nullptr) {
        throw std::invalid_argument(where + "d_out, d_in and d_scratch must all be device memory, not null");
    }
}

/** Blocks of `block` threads that stay resident on the device at once, by threads and by blocks per multiprocessor. */
inline uint64_t residentBlocks(const uint32_t block) {
    const uint32_t by_threads = deviceFigures().threads_per_sm / block;
    const uint32_t per_sm = by_threads < deviceFigures().blocks_per_sm ? by_threads : deviceFigures().blocks_per_sm;
    return uint64_t(deviceFigures().sms) * per_sm;
}

/**
 * The passes of the block-per-segment rungs: `launch_pass(blocks, d_partials, d_src, count)` reduces
 * each segment of `segment` elements of `d_src[0 .. count)` to one partial result per block; the
 * next pass reduces those partials, until one block is left, which writes `*d_out`. The partials
 * alternate between two areas of `d_scratch` after its first `n` elements; a pass may overwrite
 * its own input.
 */
template<class Src, class T, class LaunchPass>
void reduceInPasses(uint64_t n, const uint32_t segment, T* d_out, Src* d_first, T* d_scratch, LaunchPass launch_pass) {
    const uint64_t area = (n + WARP - 1) / WARP;
    T* areas[2] = {d_scratch + n, d_scratch + n + area};
    Src* src = d_first;
    for (uint32_t pass = 0;; pass++) {
        const uint64_t blocks = (n + segment - 1) / segment;
        T* dst = blocks == 1 ? d_out : areas[pass % 2];
        launch_pass(uint32_t(blocks), dst, src, n);
        checkCudaCall(cudaGetLastError(), "a reduction pass's launch");
        if (blocks == 1) { return; }
        src = dst;
        n = blocks;
    }
}

/** Rungs 1 to 3: the kernels reduce in place, so the first pass works on a copy of the input. */
template<class OP>
void reduceInPlace(void (*kernel)(typename OP::Elem*, typename OP::Elem*, uint64_t), const char* wrapper,
                   const uint32_t block, const uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                   typename OP::Elem* d_scratch) {
    typedef typename OP::Elem T;
    checkReduceArguments(wrapper, block, n, d_out, d_in, d_scratch);
    checkCudaCall(cudaMemcpyAsync(d_scratch, d_in, n * sizeof(T), cudaMemcpyDeviceToDevice), "copying the input");
    reduceInPasses(n, block, d_out, d_scratch, d_scratch, [&](uint32_t blocks, T* d_partials, T* d_src, uint64_t count) {
        kernel<<<blocks, block>>>(d_partials, d_src, count);
    });
}

/** Rungs 4 to 6: the kernels read `2 * block` elements per block and need `shared_elems` of shared memory. */
template<class OP>
void reduceTwoPerThread(void (*kernel)(typename OP::Elem*, const typename OP::Elem*, uint64_t), const char* wrapper,
                        const uint32_t shared_elems, const uint32_t block, const uint64_t n,
                        typename OP::Elem* d_out, const typename OP::Elem* d_in, typename OP::Elem* d_scratch) {
    typedef typename OP::Elem T;
    checkReduceArguments(wrapper, block, n, d_out, d_in, d_scratch);
    reduceInPasses(n, 2 * block, d_out, d_in, d_scratch, [&](uint32_t blocks, T* d_partials, const T* d_src, uint64_t count) {
        kernel<<<blocks, block, shared_elems * sizeof(T)>>>(d_partials, d_src, count);
    });
}

/** Rung 1 (given): neighboured pairs, in global memory. */
template<class OP>
void reduceNeighbored(uint32_t block, uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                      typename OP::Elem* d_scratch) {
    reduceInPlace<OP>(reduceNeighboredKernel<OP>, "reduceNeighbored", block, n, d_out, d_in, d_scratch);
}

/** Rung 2: neighboured pairs with compact active threads. */
template<class OP>
void reduceCompact(uint32_t block, uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                   typename OP::Elem* d_scratch) {
    reduceInPlace<OP>(reduceCompactKernel<OP>, "reduceCompact", block, n, d_out, d_in, d_scratch);
}

/** Rung 3: interleaved pairs. */
template<class OP>
void reduceInterleaved(uint32_t block, uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                       typename OP::Elem* d_scratch) {
    reduceInPlace<OP>(reduceInterleavedKernel<OP>, "reduceInterleaved", block, n, d_out, d_in, d_scratch);
}

/** Rung 4: shared memory, first step during the load. */
template<class OP>
void reduceShared(uint32_t block, uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                  typename OP::Elem* d_scratch) {
    reduceTwoPerThread<OP>(reduceSharedKernel<OP>, "reduceShared", block, block, n, d_out, d_in, d_scratch);
}

/** Rung 5: the last warp without block barriers. */
template<class OP>
void reduceWarpTail(uint32_t block, uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                    typename OP::Elem* d_scratch) {
    reduceTwoPerThread<OP>(reduceWarpTailKernel<OP>, "reduceWarpTail", block, block, n, d_out, d_in, d_scratch);
}

/** Rung 6: warp shuffles. */
template<class OP>
void reduceShuffle(uint32_t block, uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                   typename OP::Elem* d_scratch) {
    reduceTwoPerThread<OP>(reduceShuffleKernel<OP>, "reduceShuffle", block / WARP, block, n, d_out, d_in, d_scratch);
}

/**
 * The grid of rung 7: a block for each tile (COARSE_FACTOR Vec4 loads per thread), at most as
 * many blocks as stay resident on the device (the grid-stride loop over tiles does the rest).
 */
inline uint32_t reduceCoarsenedBlocks(const uint64_t n, const uint32_t block) {
    const uint64_t per_block = uint64_t(block) * 4 * COARSE_FACTOR;
    const uint64_t needed = (n + per_block - 1) / per_block;
    return uint32_t(needed < residentBlocks(block) ? needed : residentBlocks(block));
}

/**
 * The ticket of rung 7's last-block hand-over (64 bits: the blocks done, and for int sums their
 * sum): device memory holding 0 between launches, allocated on first use on the current device,
 * and shared by every call, which is why the calls must not overlap (the wrappers launch on the
 * default stream).
 */
inline unsigned long long* reduceTicket() {
    static unsigned long long* const ticket = [] {
        unsigned long long* d_ticket = nullptr;
        checkCudaCall(cudaMalloc(&d_ticket, sizeof(unsigned long long)), "allocating rung 7's ticket");
        checkCudaCall(cudaMemset(d_ticket, 0, sizeof(unsigned long long)), "clearing rung 7's ticket");
        return d_ticket;
    }();
    return ticket;
}

/** Rung 7: one launch with thread coarsening, one atomic per block and a last-block finish (commutative operators). */
template<class OP>
void reduceCoarsened(uint32_t block, uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                     typename OP::Elem* d_scratch) {
    static_assert(OP::commutative, "rung 7 reads the elements of a block grid-stride, out of order");
    checkReduceArguments("reduceCoarsened", block, n, d_out, d_in, d_scratch);
    reduceCoarsenedKernel<OP>
        <<<reduceCoarsenedBlocks(n, block), block, (block / WARP) * sizeof(typename OP::Elem)>>>(
            d_out, d_in, n, d_scratch + n, reduceTicket());
    checkCudaCall(cudaGetLastError(), "reduceCoarsened's launch");
}

/**
 * The chunk of rung 8: as many consecutive elements per thread as fit a tile in shared memory, at
 * most ORDERED_MAX_CHUNK, and odd, so that the lanes of a warp reading their chunks' k-th
 * elements hit different shared-memory banks.
 */
inline uint32_t reduceOrderedChunk(const uint32_t block, const size_t elem_bytes) {
    const size_t room = deviceFigures().shared_per_block - (block / WARP) * elem_bytes;
    uint32_t chunk = uint32_t(room / (block * elem_bytes));
    chunk = chunk < ORDERED_MAX_CHUNK ? chunk : ORDERED_MAX_CHUNK;
    return chunk <= 1 ? 1 : chunk - (1 - chunk % 2);
}

/**
 * Rung 8: any associative operator, in order. The blocks reduce runs of consecutive tiles, at most
 * as many blocks as stay resident; one more block then reduces their partial results in order.
 */
template<class OP>
void reduceOrdered(uint32_t block, uint64_t n, typename OP::Elem* d_out, const typename OP::Elem* d_in,
                   typename OP::Elem* d_scratch) {
    typedef typename OP::Elem T;
    checkReduceArguments("reduceOrdered", block, n, d_out, d_in, d_scratch);
    const uint32_t chunk = reduceOrderedChunk(block, sizeof(T));
    const uint64_t tile = uint64_t(chunk) * block;
    const size_t shared_bytes = (tile + block / WARP) * sizeof(T);
    const uint64_t tiles = (n + tile - 1) / tile;
    const uint64_t tiles_per_block = (tiles + residentBlocks(block) - 1) / residentBlocks(block);
    const uint64_t blocks = (tiles + tiles_per_block - 1) / tiles_per_block;
    if (blocks == 1) {
        reduceOrderedKernel<OP><<<1, block, shared_bytes>>>(d_out, d_in, n, chunk, tiles_per_block);
    } else {
        T* d_partials = d_scratch + n;
        reduceOrderedKernel<OP><<<uint32_t(blocks), block, shared_bytes>>>(d_partials, d_in, n, chunk, tiles_per_block);
        reduceOrderedKernel<OP><<<1, block, shared_bytes>>>(d_out, d_partials, blocks, chunk, (blocks + tile - 1) / tile);
    }
    checkCudaCall(cudaGetLastError(), "reduceOrdered's launch");
}

#endif // REDUCE_HOST_CUH
