#ifndef REDUCE_KERNELS_CUH
#define REDUCE_KERNELS_CUH

// The reduction ladder: eight kernels that reduce an array with an associative operator, each
// fixing one named problem of the one before it (PMPP chapter 10, the reduction lecture of the
// GPU MODE series). Built bottom-up in three levels, as in CUB:
//   1. operators: what is reduced, with its identity;
//   2. warp and block: the reductions by the threads of one warp, then of one block;
//   3. kernels: rungs 1 to 8, launched by the host wrappers in reduce_host.cuh.
// Rungs 1 to 6 reduce one segment per block and leave one partial result per block; the host
// wrapper launches them again on the partials until one value is left. Rung 7 reduces the whole
// array in one launch; rung 8 does it for an operator that is not commutative.

#include <cfloat>
#include <cstdint>
#include <type_traits>
#include <cuda_runtime.h>

#define WARP   (32)
#define FULL_WARP_MASK (0xffffffffu)

/*****************************************/
/*** 1. Operators                      ***/
/*****************************************/

// An operator `OP` is a class of static functions over its element type `OP::Elem`:
//   `identity()` the neutral element, also the padding past the end of the array;
//   `apply(a, b)` the associative operator; `commutative` whether apply(a, b) == apply(b, a).

/** The smallest and largest values of a number type, callable from device code. */
template<class T> struct Limits;
template<> struct Limits<int32_t> {
    static __device__ __host__ inline int32_t lowest()  { return INT32_MIN; }
    static __device__ __host__ inline int32_t highest() { return INT32_MAX; }
};
template<> struct Limits<float> {
    static __device__ __host__ inline float lowest()  { return -FLT_MAX; }
    static __device__ __host__ inline float highest() { return FLT_MAX; }
};

/** Addition: `Add<int32_t>`, `Add<float>`. */
template<class T>
struct Add {
    typedef T Elem;
    static const bool commutative = true;
    static __device__ __host__ inline T identity()                  { return T(0); }
    static __device__ __host__ inline T apply(const T a, const T b) { return a + b; }
};

/** Maximum: identity is the lowest value, so padding never wins. */
template<class T>
struct Max {
    typedef T Elem;
    static const bool commutative = true;
    static __device__ __host__ inline T identity()                  { return Limits<T>::lowest(); }
    static __device__ __host__ inline T apply(const T a, const T b) { return a > b ? a : b; }
};

/** Minimum: identity is the highest value. */
template<class T>
struct Min {
    typedef T Elem;
    static const bool commutative = true;
    static __device__ __host__ inline T identity()                  { return Limits<T>::highest(); }
    static __device__ __host__ inline T apply(const T a, const T b) { return a < b ? a : b; }
};

/** A 2x2 matrix of 32-bit integers that wrap around on overflow: [[a, b], [c, d]]. */
struct Mat2 {
    uint32_t a, b, c, d;
};

/**
 * The matrix product: associative but NOT commutative, so a reduction that combines elements
 * out of order gives a wrong result.
 */
struct MatMul {
    typedef Mat2 Elem;
    static const bool commutative = false;
    static __device__ __host__ inline Mat2 identity() { return Mat2{1, 0, 0, 1}; }
    static __device__ __host__ inline Mat2 apply(const Mat2 x, const Mat2 y) {
        return Mat2{x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
    }
};

/*****************************************/
/*** 2. Warp and block                 ***/
/*****************************************/

/** A shuffle of any element type made of 4-byte words (Mat2 is four): `shuffle_word` moves each word. */
template<class T, class ShuffleWord>
__device__ inline T shuffleWords(const T value, ShuffleWord shuffle_word) {
    static_assert(sizeof(T) % sizeof(uint32_t) == 0, "shuffles move 4-byte words");
    union { T elem; uint32_t words[sizeof(T) / sizeof(uint32_t)]; } u;
    u.elem = value;
    #pragma unroll
    for (uint32_t w = 0; w < sizeof(T) / sizeof(uint32_t); w++) { u.words[w] = shuffle_word(u.words[w]); }
    return u.elem;
}

/** `__shfl_down_sync` of any element type: the value of lane + delta (of this lane past the warp's end). */
template<class T>
__device__ inline T shuffleDown(const T value, const uint32_t delta) {
    return shuffleWords(value, [delta](uint32_t word) { return __shfl_down_sync(FULL_WARP_MASK, word, delta); });
}

/** `__shfl_sync` of any element type: the value of lane `src`. */
template<class T>
__device__ inline T shuffleFrom(const T value, const uint32_t src) {
    return shuffleWords(value, [src](uint32_t word) { return __shfl_sync(FULL_WARP_MASK, word, src); });
}

/**
 * TASK warp-shuffle (1 of 2): reduce the 32 values of a warp with shuffles, in lg(WARP) = 5 steps.
 *
 * Every lane of the warp calls this with its `value`; lane 0 returns the reduction of the
 * values of lanes 0, 1, ..., 31 IN THAT ORDER (the other lanes' results are not used).
 *
 * Constraint: registers only, no shared memory, and `shuffleDown` (`__shfl_down_sync`) in
 * lg(WARP) steps, each halving the number of lanes whose value still matters. Why: a shuffle
 * moves a register from one lane to another in one instruction, with no shared-memory round
 * trip and no barrier. The order must hold because rung 8 reuses this for `MatMul`, which is
 * not commutative: lane i combines its value with lane i + delta's, on its right, and lane 0's
 * chain must cover lanes 0, 1, 2, ... in turn (think about which delta comes first). The stub
 * gathers the 31 other values into lane 0 one at a time: correct, and 31 steps long.
 */
template<class OP>
__device__ inline typename OP::Elem warpReduceShuffle(typename OP::Elem value) {
    // BEGIN SOLUTION warp-shuffle
    #pragma unroll
    for (uint32_t delta = 1; delta < WARP; delta *= 2) {
        value = OP::apply(value, shuffleDown(value, delta));
    }
    return value;
    // STUB
    // typename OP::Elem acc = value;
    // for (uint32_t lane = 1; lane < WARP; lane++) {
    //     acc = OP::apply(acc, shuffleFrom(value, lane));
    // }
    // return acc;
    // END SOLUTION
}

/**
 * TASK warp-shuffle (2 of 2): reduce the values of the whole block, in thread order.
 *
 * Every thread of the block calls this with its `value`; thread 0 returns the reduction of the
 * values of threads 0, 1, ..., blockDim.x - 1 in that order. `warp_partials` is shared memory
 * for blockDim.x / WARP elements. blockDim.x is a power of two from 32 to 1024.
 *
 * Constraint: each warp reduces its own values with `warpReduceShuffle`, lane 0 of each warp
 * stores the warp's partial result in `warp_partials`, and after ONE `__syncthreads()` the
 * first warp reduces the partials with `warpReduceShuffle` again (lanes past the last warp
 * take the identity). Why: one barrier in all, instead of one per level of a shared-memory
 * tree. The stub lets thread 0 combine the partials one after another.
 */
template<class OP>
__device__ inline typename OP::Elem blockReduceShuffle(typename OP::Elem value, typename OP::Elem* warp_partials) {
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    const uint32_t warps = blockDim.x / WARP;
    value = warpReduceShuffle<OP>(value);
    if (lane == 0) { warp_partials[warp] = value; }
    // BEGIN SOLUTION warp-shuffle
    __syncthreads();
    if (warp == 0) {
        value = warpReduceShuffle<OP>(lane < warps ? warp_partials[lane] : OP::identity());
    }
    // STUB
    // __syncthreads();
    // if (threadIdx.x == 0) {
    //     for (uint32_t w = 1; w < warps; w++) { value = OP::apply(value, warp_partials[w]); }
    // }
    // END SOLUTION
    return value;
}

/*****************************************/
/*** 3. Kernels: the ladder            ***/
/*****************************************/

/**
 * Rung 1, given: neighboured pairs in a tree, in global memory.
 *
 * Block b reduces its segment `d_data[b * blockDim.x ..]` of blockDim.x elements IN PLACE (only
 * the first `n` elements of `d_data` exist: the rest of the last segment counts as the identity)
 * and writes the segment's result to `d_partials[b]`. In step `stride` (1, 2, 4, ...), thread t
 * combines element t with element t + stride when t is a multiple of 2 * stride.
 *
 * Problem: the active threads are spread over the warps, so most warps diverge in most steps,
 * and each step reads and writes global memory.
 */
template<class OP>
__global__ void reduceNeighboredKernel(typename OP::Elem* d_partials, typename OP::Elem* d_data, const uint64_t n) {
    const uint32_t tid = threadIdx.x;
    typename OP::Elem* segment = d_data + uint64_t(blockIdx.x) * blockDim.x;
    const uint64_t rest = n - uint64_t(blockIdx.x) * blockDim.x;
    const uint64_t valid = rest < blockDim.x ? rest : blockDim.x;  // elements of this segment inside the array
    for (uint32_t stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0 && tid + stride < valid) {
            segment[tid] = OP::apply(segment[tid], segment[tid + stride]);
        }
        __syncthreads();
    }
    if (tid == 0) { d_partials[blockIdx.x] = segment[0]; }
}

/**
 * TASK compact: rung 2, neighboured pairs with compact active threads.
 *
 * The same result as rung 1, element for element: in step `stride`, element 2 * stride * k
 * absorbs element 2 * stride * k + stride, for every k with both inside the segment's `valid`
 * elements (an element at or past `valid` counts as the identity).
 *
 * Constraint: thread t does the work of pair k = t, at `index = 2 * stride * t`, so the active
 * threads are threads 0, 1, 2, ... of the block. Why: rung 1's active threads are spread over
 * all warps, so every warp pays for the divergent branch; here the active threads fill whole
 * warps and the idle warps skip the step. One `__syncthreads()` per step, as in rung 1.
 */
template<class OP>
__global__ void reduceCompactKernel(typename OP::Elem* d_partials, typename OP::Elem* d_data, const uint64_t n) {
    // BEGIN SOLUTION compact
    const uint32_t tid = threadIdx.x;
    typename OP::Elem* segment = d_data + uint64_t(blockIdx.x) * blockDim.x;
    const uint64_t rest = n - uint64_t(blockIdx.x) * blockDim.x;
    const uint64_t valid = rest < blockDim.x ? rest : blockDim.x;
    for (uint32_t stride = 1; stride < blockDim.x; stride *= 2) {
        const uint64_t index = uint64_t(2 * stride) * tid;
        if (index + stride < valid) {
            segment[index] = OP::apply(segment[index], segment[index + stride]);
        }
        __syncthreads();
    }
    if (tid == 0) { d_partials[blockIdx.x] = segment[0]; }
    // STUB
    // END SOLUTION
}

/**
 * TASK interleaved: rung 3, interleaved pairs.
 *
 * Block b reduces its segment of blockDim.x elements in place, as in rung 1, and writes the
 * result to `d_partials[b]`, but pairs elements half a segment apart: the stride starts at
 * blockDim.x / 2 and halves, and in each step thread t < stride combines element t with
 * element t + stride (an element at or past `valid` counts as the identity).
 *
 * Constraint: `tid < stride` decides who works. Why: the active threads are always the first
 * ones, so no warp diverges until fewer than 32 threads work; and a warp's 32 accesses in one
 * step are 32 consecutive elements, coalesced, where rung 2's are 2 * stride apart. The order
 * of the operands changes, which is fine for a commutative operator only.
 */
template<class OP>
__global__ void reduceInterleavedKernel(typename OP::Elem* d_partials, typename OP::Elem* d_data, const uint64_t n) {
    // BEGIN SOLUTION interleaved
    const uint32_t tid = threadIdx.x;
    typename OP::Elem* segment = d_data + uint64_t(blockIdx.x) * blockDim.x;
    const uint64_t rest = n - uint64_t(blockIdx.x) * blockDim.x;
    const uint64_t valid = rest < blockDim.x ? rest : blockDim.x;
    for (uint32_t stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride && tid + stride < valid) {
            segment[tid] = OP::apply(segment[tid], segment[tid + stride]);
        }
        __syncthreads();
    }
    if (tid == 0) { d_partials[blockIdx.x] = segment[0]; }
    // STUB
    // END SOLUTION
}

/** Shared memory of the block, as elements of type T (the launch gives its size). */
template<class T>
__device__ inline T* sharedElems() {
    extern __shared__ uint4 shared_words[];  // uint4: aligned for any element type up to 16 bytes
    return reinterpret_cast<T*>(shared_words);
}

/**
 * TASK shared-memory: rung 4, the tree in shared memory, with the first step done during the load.
 *
 * Block b reduces the 2 * blockDim.x elements `d_in[b * 2 * blockDim.x ..]` (elements at or past
 * `n` count as the identity) and writes the result to `d_partials[b]`. `d_in` is only read.
 * Shared memory holds blockDim.x elements (`sharedElems<Elem>()`).
 *
 * Constraint: thread t reads element t and element t + blockDim.x of the segment, combines
 * them, and stores the result in shared memory; then the interleaved tree of rung 3 runs in
 * shared memory. Why: global memory is read once per element, coalesced, and never written
 * but for the result; half the threads of rung 3 were idle from the first step, and now every
 * thread does one addition before the tree starts.
 */
template<class OP>
__global__ void reduceSharedKernel(typename OP::Elem* d_partials, const typename OP::Elem* d_in, const uint64_t n) {
    // BEGIN SOLUTION shared-memory
    typedef typename OP::Elem T;
    T* tree = sharedElems<T>();
    const uint32_t tid = threadIdx.x;
    const uint64_t first = uint64_t(blockIdx.x) * 2 * blockDim.x + tid;
    const uint64_t second = first + blockDim.x;
    T value = first < n ? d_in[first] : OP::identity();
    if (second < n) { value = OP::apply(value, d_in[second]); }
    tree[tid] = value;
    __syncthreads();
    for (uint32_t stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) { tree[tid] = OP::apply(tree[tid], tree[tid + stride]); }
        __syncthreads();
    }
    if (tid == 0) { d_partials[blockIdx.x] = tree[0]; }
    // STUB
    // END SOLUTION
}

/**
 * TASK warp-tail: rung 5, the last warp without block barriers.
 *
 * The same result as rung 4, with the same loads and the same tree in shared memory while more
 * than one warp works (stride > WARP). Then the first warp alone finishes the last steps
 * (stride 32 down to 1, or from blockDim.x / 2 for a 32-thread block), without __syncthreads.
 *
 * Constraint: in the warp's steps, separate every read of another lane's element from the
 * writes that follow with `__syncwarp()`, and every write from the next step's reads. Why: a
 * block barrier makes every warp of the block wait, and once one warp works it is pure
 * overhead; but since Volta the lanes of a warp are not guaranteed to run in lockstep, and the
 * pre-Volta idiom of bare `volatile` accesses is a race that the compiler and the hardware may
 * expose. `__syncwarp()` costs almost nothing and makes the warp's steps correct.
 */
template<class OP>
__global__ void reduceWarpTailKernel(typename OP::Elem* d_partials, const typename OP::Elem* d_in, const uint64_t n) {
    // BEGIN SOLUTION warp-tail
    typedef typename OP::Elem T;
    T* tree = sharedElems<T>();
    const uint32_t tid = threadIdx.x;
    const uint64_t first = uint64_t(blockIdx.x) * 2 * blockDim.x + tid;
    const uint64_t second = first + blockDim.x;
    T value = first < n ? d_in[first] : OP::identity();
    if (second < n) { value = OP::apply(value, d_in[second]); }
    tree[tid] = value;
    __syncthreads();
    for (uint32_t stride = blockDim.x / 2; stride > WARP; stride /= 2) {
        if (tid < stride) { tree[tid] = OP::apply(tree[tid], tree[tid + stride]); }
        __syncthreads();
    }
    if (tid < WARP) {
        value = tree[tid];
        for (uint32_t stride = blockDim.x / 2 < WARP ? blockDim.x / 2 : WARP; stride > 0; stride /= 2) {
            if (tid < stride) { value = OP::apply(value, tree[tid + stride]); }
            __syncwarp();
            if (tid < stride) { tree[tid] = value; }
            __syncwarp();
        }
        if (tid == 0) { d_partials[blockIdx.x] = value; }
    }
    // STUB
    // END SOLUTION
}

/**
 * Rung 6, warp shuffle: rung 4's loads, then `blockReduceShuffle` (task warp-shuffle) instead of
 * the shared-memory tree. Shared memory holds blockDim.x / WARP elements.
 */
template<class OP>
__global__ void reduceShuffleKernel(typename OP::Elem* d_partials, const typename OP::Elem* d_in, const uint64_t n) {
    typedef typename OP::Elem T;
    const uint64_t first = uint64_t(blockIdx.x) * 2 * blockDim.x + threadIdx.x;
    const uint64_t second = first + blockDim.x;
    T value = first < n ? d_in[first] : OP::identity();
    if (second < n) { value = OP::apply(value, d_in[second]); }
    value = blockReduceShuffle<OP>(value, sharedElems<T>());
    if (threadIdx.x == 0) { d_partials[blockIdx.x] = value; }
}

/** Vec4 loads in flight per thread and loop iteration in rung 7: 16 elements of 4 bytes. A build may override it. */
#ifndef COARSE_FACTOR
#define COARSE_FACTOR (4)
#endif

/**
 * Blocks of 1024 threads that rung 7's launch bounds ask to fit one multiprocessor: 2 (32 registers
 * a thread) where a multiprocessor holds 2048 threads, 1 on Turing (sm_75), which holds 1024.
 */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define COARSENED_MIN_BLOCKS (1)
#else
#define COARSENED_MIN_BLOCKS (2)
#endif

/** Four consecutive elements, read from global memory with one 16-byte load. */
template<class T>
struct alignas(4 * sizeof(T)) Vec4 {
    T x[4];
};

/**
 * TASK coarsened: rung 7, the whole array in one launch, with thread coarsening.
 *
 * The grid reduces all `n` elements of `d_in` into `*d_out` for a commutative operator: each
 * thread combines many elements in a register, the block reduces its threads' values with
 * `blockReduceShuffle`, and thread 0 stores the block's result in `d_partials[blockIdx.x]`. The
 * last block to finish then reduces the gridDim.x partials into `*d_out`. Any `n`, any grid
 * size; shared memory holds blockDim.x / WARP elements. `*d_ticket` is 0 at the launch, and
 * must be 0 again at its end.
 *
 * Constraints:
 *  - where `d_in` is 16-byte aligned and the element has 4 bytes, read `Vec4<Elem>`s (16 bytes)
 *    in tiles of COARSE_FACTOR * blockDim.x Vec4s: block b takes tiles b, b + gridDim.x, ...
 *    (a grid-stride loop over tiles), and thread t issues the loads of Vec4s t, t + blockDim.x,
 *    ... of the tile, COARSE_FACTOR of them, before it combines any; the Vec4s after the last
 *    whole tile in a grid-stride loop over the threads, and the up to 3 elements past the last
 *    whole Vec4 (or all of them, unaligned) in a scalar one. Why: the block-per-segment rungs
 *    spend a barrier-heavy tree and a partial result on every 2 * blockDim.x elements; here the
 *    tree happens once per block, the independent loads keep enough bytes in flight to stream
 *    memory at DRAM speed, and each tile is one run of consecutive bytes, which DRAM serves
 *    faster than the same loads spread over the array (about 2% at 2^28 ints on an H100);
 *  - ONE `atomicAdd` per block, on `*d_ticket`, after `__threadfence()` has made the block's
 *    partial visible to the whole grid: the block that draws ticket gridDim.x - 1 knows every
 *    partial is there, reduces them, and resets the ticket. Why: the whole job takes one launch,
 *    where CUB's DeviceReduce takes two, which shows on small arrays, and no launch is needed to
 *    set `*d_out` before atomic updates either.
 * The launch bounds (up to 1024 threads, 2 such blocks per multiprocessor) hold the kernel to 32
 * registers, so that the grid of reduceCoarsenedBlocks, every thread a multiprocessor holds, is
 * resident at once: a block that waits for a free multiprocessor would finish its share last.
 *
 * Beyond the task, the reference sums `Add<int32_t>` with no partials at all: int addition
 * wraps around modulo 2^32, so the block adds its sum to the upper half of the 64-bit ticket in
 * the same `atomicAdd` that counts it in the lower half, and the last block finds the total in
 * what its atomic returns. Its `__threadfence()`, and the last block's reading of the partials,
 * cost about 1 us, an eighth of rung 7's time on 2^20 ints on an H100.
 */
template<class OP>
__global__ void __launch_bounds__(1024, COARSENED_MIN_BLOCKS) reduceCoarsenedKernel(typename OP::Elem* d_out, const typename OP::Elem* d_in, const uint64_t n,
                                      typename OP::Elem* d_partials, unsigned long long* d_ticket) {
    // BEGIN SOLUTION coarsened
    typedef typename OP::Elem T;
    T* warp_partials = sharedElems<T>();
    const uint64_t threads = uint64_t(gridDim.x) * blockDim.x;
    const uint64_t gid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool vectors = sizeof(T) == 4 && reinterpret_cast<uintptr_t>(d_in) % sizeof(Vec4<T>) == 0;
    const uint64_t n_vec = vectors ? n / 4 : 0;
    const Vec4<T>* d_in4 = reinterpret_cast<const Vec4<T>*>(d_in);
    const uint64_t tile = uint64_t(COARSE_FACTOR) * blockDim.x;  // Vec4s, COARSE_FACTOR per thread
    const uint64_t whole_tiles = n_vec / tile;
    T acc = OP::identity();
    for (uint64_t t = blockIdx.x; t < whole_tiles; t += gridDim.x) {
        const Vec4<T>* tile_in = d_in4 + t * tile + threadIdx.x;
        Vec4<T> loaded[COARSE_FACTOR];
        #pragma unroll
        for (uint32_t k = 0; k < COARSE_FACTOR; k++) { loaded[k] = tile_in[k * blockDim.x]; }
        #pragma unroll
        for (uint32_t k = 0; k < COARSE_FACTOR; k++) {
            #pragma unroll
            for (uint32_t e = 0; e < 4; e++) { acc = OP::apply(acc, loaded[k].x[e]); }
        }
    }
    for (uint64_t i = whole_tiles * tile + gid; i < n_vec; i += threads) {
        const Vec4<T> loaded = d_in4[i];
        #pragma unroll
        for (uint32_t e = 0; e < 4; e++) { acc = OP::apply(acc, loaded.x[e]); }
    }
    for (uint64_t j = 4 * n_vec + gid; j < n; j += threads) { acc = OP::apply(acc, d_in[j]); }
    acc = blockReduceShuffle<OP>(acc, warp_partials);

    if constexpr (std::is_same<OP, Add<int32_t>>::value) {
        if (threadIdx.x == 0) {
            const unsigned long long sum_and_count = (static_cast<unsigned long long>(static_cast<uint32_t>(acc)) << 32) + 1;
            const unsigned long long before = atomicAdd(d_ticket, sum_and_count);
            if (static_cast<uint32_t>(before) == gridDim.x - 1) {
                *d_out = static_cast<int32_t>(static_cast<uint32_t>(before >> 32) + static_cast<uint32_t>(acc));
                *d_ticket = 0;
            }
        }
        return;
    }
    __shared__ bool last_block;
    if (threadIdx.x == 0) {
        d_partials[blockIdx.x] = acc;
        __threadfence();
        last_block = atomicAdd(d_ticket, 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (last_block) {
        // Other blocks' partials: read through volatile, past this SM's L1, which may hold stale lines.
        const volatile T* partials = d_partials;
        acc = OP::identity();
        for (uint32_t b = threadIdx.x; b < gridDim.x; b += blockDim.x) { acc = OP::apply(acc, partials[b]); }
        acc = blockReduceShuffle<OP>(acc, warp_partials);
        if (threadIdx.x == 0) {
            *d_out = acc;
            *d_ticket = 0;
        }
    }
    // STUB
    // END SOLUTION
}

/**
 * TASK ordered: rung 8, the same for an operator that is not commutative.
 *
 * Block b reduces tiles `first_tile = b * tiles_per_block` up to (not including)
 * `first_tile + tiles_per_block`, of `chunk * blockDim.x` consecutive elements each (elements at
 * or past `n` count as the identity, and so do tiles past the last), in index order, and writes
 * the result to `d_partials[b]`; the wrapper then reduces the partials in order. Shared memory
 * holds a tile (`chunk * blockDim.x` elements) followed by blockDim.x / WARP elements for
 * `blockReduceShuffle`.
 *
 * Constraint: per tile, the block copies the tile to shared memory so that in each of `chunk`
 * steps its threads read CONSECUTIVE global elements (coalesced); then thread t combines its
 * `chunk` consecutive elements `t * chunk ..` of the tile in order, and `blockReduceShuffle`
 * combines the threads' values in thread order. Why: the order of the elements must be kept,
 * so each thread owns a contiguous chunk; reading the chunks straight from global memory (the
 * stub) has the 32 lanes of a warp read 32 addresses `chunk` elements apart, up to 32 memory
 * transactions per load instead of a few.
 */
template<class OP>
__global__ void reduceOrderedKernel(typename OP::Elem* d_partials, const typename OP::Elem* d_in, const uint64_t n,
                                    const uint32_t chunk, const uint64_t tiles_per_block) {
    typedef typename OP::Elem T;
    T* tile = sharedElems<T>();
    T* warp_partials = tile + chunk * blockDim.x;
    const uint64_t tile_elems = uint64_t(chunk) * blockDim.x;
    const uint64_t tiles = (n + tile_elems - 1) / tile_elems;
    const uint64_t first_tile = uint64_t(blockIdx.x) * tiles_per_block;
    const uint64_t end_tile = first_tile + tiles_per_block < tiles ? first_tile + tiles_per_block : tiles;
    T block_acc = OP::identity();  // meaningful in thread 0
    for (uint64_t t = first_tile; t < end_tile; t++) {
        const uint64_t base = t * tile_elems;
        T acc = OP::identity();
        // BEGIN SOLUTION ordered
        for (uint32_t k = 0; k < chunk; k++) {
            const uint64_t local = uint64_t(k) * blockDim.x + threadIdx.x;
            tile[local] = base + local < n ? d_in[base + local] : OP::identity();
        }
        __syncthreads();
        for (uint32_t k = 0; k < chunk; k++) { acc = OP::apply(acc, tile[threadIdx.x * chunk + k]); }
        // STUB
        // for (uint32_t k = 0; k < chunk; k++) {
        //     const uint64_t index = base + uint64_t(threadIdx.x) * chunk + k;
        //     if (index < n) { acc = OP::apply(acc, d_in[index]); }
        // }
        // END SOLUTION
        acc = blockReduceShuffle<OP>(acc, warp_partials);
        if (threadIdx.x == 0) { block_acc = OP::apply(block_acc, acc); }
        __syncthreads();  // the tile and the warp partials are overwritten next
    }
    if (threadIdx.x == 0) { d_partials[blockIdx.x] = block_acc; }
}

#endif // REDUCE_KERNELS_CUH
