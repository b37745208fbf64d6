#ifndef PBB_KERNELS_CU_H
#define PBB_KERNELS_CU_H

// Parallel basic blocks: reduce, scan and segmented scan, built bottom-up in four levels:
//   1. operators: the associative operators and the element types they work on;
//   2. copies:    coalesced transfers between global and shared memory;
//   3. warp and block: scans by the threads of one warp, then of one block, in shared memory;
//   4. kernels:   the grid-level pieces that the host wrappers in hostSkel.cu.h launch.
// Every function keeps the name and signature of the PMPH course, so course code drops in.

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <cuda_runtime.h>
#include "constants.cu.h"

/*****************************************/
/*** 1. Operators                      ***/
/*****************************************/

// An operator `OP` is a class of static functions over two element types:
//   `InpElTp` the input elements, `RedElTp` what is reduced or scanned, with
//   `mapFun`  : InpElTp -> RedElTp, applied to each input element first;
//   `identInp()` an input element that `mapFun` sends to `identity()`, used as padding;
//   `apply`   the associative operator on RedElTp and `identity()` its neutral element;
//   `commutative` whether apply(a, b) == apply(b, a), which allows any order of reduction;
//   `equals`  equality of results, `remVolatile` a plain copy of a volatile (shared) element.

/** Addition of numbers: `Add<int>`, `Add<float>`, ... */
template<class T>
class Add {
  public:
    typedef T InpElTp;
    typedef T RedElTp;
    static const bool commutative = true;
    static __device__ __host__ inline T identInp()                    { return (T)0; }
    static __device__ __host__ inline T mapFun(const T& el)           { return el; }
    static __device__ __host__ inline T identity()                    { return (T)0; }
    static __device__ __host__ inline T apply(const T t1, const T t2) { return t1 + t2; }

    static __device__ __host__ inline bool equals(const T t1, const T t2) { return t1 == t2; }
    static __device__ __host__ inline T remVolatile(volatile T& t)        { T res = t; return res; }
};

/** Four integers, the state of the maximum-segment-sum operator `Mssp`. */
class MyInt4 {
  public:
    int x; int y; int z; int w;

    __device__ __host__ inline MyInt4() : x(0), y(0), z(0), w(0) {}
    __device__ __host__ inline MyInt4(const int a, const int b, const int c, const int d)
        : x(a), y(b), z(c), w(d) {}
    __device__ __host__ inline MyInt4(const MyInt4& i4) : x(i4.x), y(i4.y), z(i4.z), w(i4.w) {}
    __device__ __host__ inline MyInt4(const volatile MyInt4& i4) : x(i4.x), y(i4.y), z(i4.z), w(i4.w) {}

    __device__ __host__ inline MyInt4& operator=(const MyInt4& i4) {
        x = i4.x; y = i4.y; z = i4.z; w = i4.w;
        return *this;
    }
    __device__ __host__ inline volatile MyInt4& operator=(const MyInt4& i4) volatile {
        x = i4.x; y = i4.y; z = i4.z; w = i4.w;
        return *this;
    }
};

/**
 * Maximum segment sum: the largest sum of a contiguous run of the input (0 for none).
 * `x` the best segment sum, `y` the best prefix sum, `z` the best suffix sum, `w` the total.
 * Associative but NOT commutative: an implementation that combines elements out of order
 * gives wrong results, which makes it the operator that catches ordering bugs.
 */
class Mssp {
  public:
    typedef int32_t InpElTp;
    typedef MyInt4  RedElTp;
    static const bool commutative = false;
    static __device__ __host__ inline InpElTp identInp() { return 0; }
    static __device__ __host__ inline MyInt4 mapFun(const InpElTp& el) {
        const int x = el > 0 ? el : 0;
        return MyInt4(x, x, x, el);
    }
    static __device__ __host__ inline MyInt4 identity() { return MyInt4(0, 0, 0, 0); }
    static __device__ __host__ inline MyInt4 apply(const MyInt4 t1, const MyInt4 t2) {
        const int mss = max(max(t1.x, t2.x), t1.z + t2.y);
        const int mis = max(t1.y, t1.w + t2.y);
        const int mcs = max(t2.z, t1.z + t2.w);
        const int t   = t1.w + t2.w;
        return MyInt4(mss, mis, mcs, t);
    }
    static __device__ __host__ inline bool equals(const MyInt4& t1, const MyInt4& t2) {
        return t1.x == t2.x && t1.y == t2.y && t1.z == t2.z && t1.w == t2.w;
    }
    static __device__ __host__ inline MyInt4 remVolatile(volatile MyInt4& t) {
        MyInt4 res(t);
        return res;
    }
};

/** A value with a flag, the element of a segmented scan: a set flag starts a new segment. */
template<class T>
class ValFlg {
  public:
    T    v;
    char f;
    __device__ __host__ inline ValFlg() : v(), f(0) {}
    __device__ __host__ inline ValFlg(const char f1, const T& v1) : v(v1), f(f1) {}
    __device__ __host__ inline ValFlg(const ValFlg& vf) : v(vf.v), f(vf.f) {}
    __device__ __host__ inline ValFlg& operator=(const ValFlg& vf) {
        v = vf.v; f = vf.f;
        return *this;
    }
    __device__ __host__ inline void operator=(const ValFlg& vf) volatile { v = vf.v; f = vf.f; }
};

/** Lifts an operator to flag-value pairs, so that a scan with it restarts at every set flag. */
template<class OP>
class LiftOP {
  public:
    typedef ValFlg<typename OP::InpElTp> InpElTp;
    typedef ValFlg<typename OP::RedElTp> RedElTp;
    static const bool commutative = false;
    static __device__ __host__ inline InpElTp identInp() { return InpElTp(0, OP::identInp()); }
    static __device__ __host__ inline RedElTp mapFun(const InpElTp& el) {
        return RedElTp(el.f, OP::mapFun(el.v));
    }
    static __device__ __host__ inline RedElTp identity() { return RedElTp(0, OP::identity()); }
    static __device__ __host__ inline RedElTp apply(const RedElTp t1, const RedElTp t2) {
        const typename OP::RedElTp v = t2.f != 0 ? t2.v : OP::apply(t1.v, t2.v);
        return RedElTp(t1.f | t2.f, v);
    }
    static __device__ __host__ inline bool equals(const RedElTp t1, const RedElTp t2) {
        return t1.f == t2.f && OP::equals(t1.v, t2.v);
    }
    static __device__ __host__ inline RedElTp remVolatile(volatile RedElTp& t) {
        RedElTp res(t.f, OP::remVolatile(t.v));
        return res;
    }
};

/*****************************************/
/*** 2. Copies global <-> shared       ***/
/*****************************************/

/**
 * A copy kernel for `N` ints, one per thread: the bandwidth a memory-bound kernel can hope for.
 */
__global__ void naiveMemcpy(int* d_out, int* d_inp, const uint32_t N) {
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < N) {
        d_out[gid] = d_inp[gid];
    }
}

/**
 * TASK copy (1 of 2): make the global-memory reads coalesced.
 *
 * The block copies `CHUNK * blockDim.x` consecutive elements of `d_inp`, starting at
 * `glb_offs`, into `shmem_inp[0 .. CHUNK*blockDim.x)`, in the same order; an element whose
 * global index is `N` or more is replaced by `ne` (the neutral element, think zero).
 * Ends with `__syncthreads()`, so the whole tile is visible to the block on return.
 *
 * Constraint: in each iteration of the loop, the 32 threads of a warp must read 32
 * CONSECUTIVE elements of `d_inp`. Why: the hardware then serves the whole warp with one or
 * two memory transactions; the stub has each thread read its own run of CHUNK elements, so
 * one warp instruction touches 32 elements CHUNK apart and costs up to 32 transactions.
 * Only the mapping from `i` and `threadIdx.x` to the local index changes; the result does not.
 */
template<class T, uint32_t CHUNK>
__device__ inline void
copyFromGlb2ShrMem( const uint32_t glb_offs
                  , const uint32_t N
                  , const T& ne
                  , T* d_inp
                  , volatile T* shmem_inp
) {
    #pragma unroll
    for (uint32_t i = 0; i < CHUNK; i++) {
        // BEGIN SOLUTION copy
        const uint32_t loc_ind = i * blockDim.x + threadIdx.x;
        // STUB
        // const uint32_t loc_ind = threadIdx.x * CHUNK + i;
        // END SOLUTION
        const uint32_t glb_ind = glb_offs + loc_ind;
        T elm = ne;
        if (glb_ind < N) { elm = d_inp[glb_ind]; }
        shmem_inp[loc_ind] = elm;
    }
    __syncthreads();
}

/**
 * TASK copy (2 of 2): make the global-memory writes coalesced.
 *
 * The block writes `shmem_red[0 .. CHUNK*blockDim.x)` to `d_out[glb_offs ..]`, in the same
 * order, skipping every element whose global index is `N` or more (it lies outside the array).
 * The caller synchronizes before the call, so the whole tile is ready. Ends with
 * `__syncthreads()`, as the course's does, so the caller may overwrite the tile on return (the
 * course's scan3rdKernel loads the next tile into the same shared memory right after).
 *
 * Constraint: as in `copyFromGlb2ShrMem`, the threads of a warp must write consecutive
 * elements of `d_out` in each iteration.
 */
template<class T, uint32_t CHUNK>
__device__ inline void
copyFromShr2GlbMem( const uint32_t glb_offs
                  , const uint32_t N
                  , T* d_out
                  , volatile T* shmem_red
) {
    #pragma unroll
    for (uint32_t i = 0; i < CHUNK; i++) {
        // BEGIN SOLUTION copy
        const uint32_t loc_ind = i * blockDim.x + threadIdx.x;
        // STUB
        // const uint32_t loc_ind = threadIdx.x * CHUNK + i;
        // END SOLUTION
        const uint32_t glb_ind = glb_offs + loc_ind;
        if (glb_ind < N) {
            T elm = const_cast<const T&>(shmem_red[loc_ind]);
            d_out[glb_ind] = elm;
        }
    }
    __syncthreads();
}

/*****************************************/
/*** 3. Warp and block level           ***/
/*****************************************/

/**
 * TASK scan-warp: inclusive scan of the 32 elements of one warp, in lg(WARP) = 5 steps.
 *
 * `ptr` is shared memory holding one element per thread of the block; `idx` is the thread's
 * index in the block (threadIdx.x). The warp of thread `idx` scans `ptr[warp start .. +32)` with
 * `OP` IN PLACE (the block scan below relies on `ptr` holding the scan afterwards), and each
 * thread returns its own scanned element. Every thread of the warp calls this function.
 *
 * Constraints:
 *  - depth lg(WARP): in step d, lane `l >= 2^d` combines the element of lane `l - 2^d` with its
 *    own, keeping the left operand on the left, because `OP` need not be commutative (Mssp);
 *  - correct under independent thread scheduling: since Volta the lanes of a warp are not
 *    guaranteed to run in lockstep, so separate each step's reads from the next writes with
 *    `__syncwarp()` (or keep the values in registers and use shuffles). The pre-Volta idiom
 *    of plain `volatile` accesses without `__syncwarp()` is a race and fails this task;
 *  - no `__syncthreads()`: only one warp may be calling.
 * The stub is correct but takes 31 sequential steps on lane 0 while the other lanes idle.
 */
template<class OP>
__device__ inline typename OP::RedElTp
scanIncWarp( volatile typename OP::RedElTp* ptr, const uint32_t idx ) {
    const uint32_t lane = idx & (WARP - 1);
    // BEGIN SOLUTION scan-warp
    typename OP::RedElTp acc = OP::remVolatile(ptr[idx]);
    #pragma unroll
    for (uint32_t h = 1; h < WARP; h <<= 1) {
        if (lane >= h) {
            typename OP::RedElTp left = OP::remVolatile(ptr[idx - h]);
            acc = OP::apply(left, acc);
        }
        __syncwarp();
        ptr[idx] = acc;
        __syncwarp();
    }
    return acc;
    // STUB
    // if (lane == 0) {
    //     for (uint32_t i = 1; i < WARP; i++) {
    //         typename OP::RedElTp prev = OP::remVolatile(ptr[idx + i - 1]);
    //         typename OP::RedElTp curr = OP::remVolatile(ptr[idx + i]);
    //         ptr[idx + i] = OP::apply(prev, curr);
    //     }
    // }
    // __syncwarp();
    // return OP::remVolatile(ptr[idx]);
    // END SOLUTION
}

/**
 * TASK scan-block: find and fix the race.
 *
 * Inclusive scan of the `blockDim.x` elements of `ptr` (one per thread, shared memory) by the
 * whole block; each thread returns its scanned element and `ptr` is left clobbered, so callers
 * synchronize before writing `ptr` again. `blockDim.x` is a multiple of WARP, at most 1024.
 * Algorithm: 1. each warp scans its 32 elements; 2. the last lane of each warp puts the warp's
 * total in `ptr[warpid]`; 3. the first warp scans those totals; 4. every thread adds the
 * totals of the warps before its own.
 *
 * The code below gives wrong results, rarely, and only for blocks of 1024 threads. Find the
 * two accesses that race, say why 1024 is the only block size where they meet, and fix it
 * without adding a `__syncthreads()`.
 */
template<class OP>
__device__ inline typename OP::RedElTp
scanIncBlock( volatile typename OP::RedElTp* ptr, const uint32_t idx ) {
    const uint32_t lane   = idx & (WARP - 1);
    const uint32_t warpid = idx >> lgWARP;

    // 1. scan each warp
    typename OP::RedElTp res = scanIncWarp<OP>(ptr, idx);
    __syncthreads();

    // 2. the last lane of each warp publishes the warp's total in the first 32 elements
    // BEGIN SOLUTION scan-block
    if (lane == (WARP - 1)) { ptr[warpid] = res; }
    // STUB
    // if (lane == (WARP - 1)) { ptr[warpid] = OP::remVolatile(ptr[idx]); }
    // END SOLUTION
    __syncthreads();

    // 3. the first warp scans the warp totals
    if (warpid == 0) { scanIncWarp<OP>(ptr, idx); }
    __syncthreads();

    // 4. add the totals of the previous warps
    if (warpid > 0) {
        typename OP::RedElTp prefix = OP::remVolatile(ptr[warpid - 1]);
        res = OP::apply(prefix, res);
    }
    return res;
}

/**
 * TASK sgm-scan (1 of 2): segmented inclusive scan of one warp, in lg(WARP) steps.
 *
 * As `scanIncWarp`, over flag-value pairs: `ptr` holds the values and `flg` the flags, one
 * per thread; a nonzero flag starts a new segment, so the scan restarts at that element.
 * Both arrays are scanned in place (a flag becomes "a segment starts at or before me within
 * the warp") and each thread returns its pair. `LiftOP<OP>::apply` is exactly the operator
 * to scan with. The same constraints as for `scanIncWarp` hold: 5 steps, `__syncwarp()`
 * between them, left operand on the left.
 */
template<class OP, class F>
__device__ inline ValFlg<typename OP::RedElTp>
sgmScanIncWarp( volatile typename OP::RedElTp* ptr, volatile F* flg, const uint32_t idx ) {
    typedef ValFlg<typename OP::RedElTp> FVTup;
    const uint32_t lane = idx & (WARP - 1);
    // BEGIN SOLUTION sgm-scan
    FVTup acc(flg[idx], OP::remVolatile(ptr[idx]));
    #pragma unroll
    for (uint32_t h = 1; h < WARP; h <<= 1) {
        if (lane >= h) {
            FVTup left(flg[idx - h], OP::remVolatile(ptr[idx - h]));
            acc = LiftOP<OP>::apply(left, acc);
        }
        __syncwarp();
        ptr[idx] = acc.v;
        flg[idx] = acc.f;
        __syncwarp();
    }
    return acc;
    // STUB
    // (void)lane;
    // return FVTup(flg[idx], OP::remVolatile(ptr[idx]));
    // END SOLUTION
}

/**
 * Segmented inclusive scan of a block, built on `sgmScanIncWarp` as `scanIncBlock` is on
 * `scanIncWarp`: `ptr` values and `flg` flags, one per thread, both clobbered.
 */
template<class OP, class F>
__device__ inline ValFlg<typename OP::RedElTp>
sgmScanIncBlock( volatile typename OP::RedElTp* ptr, volatile F* flg, const uint32_t idx ) {
    typedef ValFlg<typename OP::RedElTp> FVTup;
    const uint32_t lane   = idx & (WARP - 1);
    const uint32_t warpid = idx >> lgWARP;

    // 1. scan each warp
    FVTup res = sgmScanIncWarp<OP, F>(ptr, flg, idx);
    __syncthreads();

    // 2. the last lane of each warp publishes the warp's pair
    if (lane == (WARP - 1)) {
        ptr[warpid] = res.v;
        flg[warpid] = res.f;
    }
    __syncthreads();

    // 3. the first warp scans the warp pairs
    if (warpid == 0) { sgmScanIncWarp<OP, F>(ptr, flg, idx); }
    __syncthreads();

    // 4. combine with the pairs of the previous warps
    if (warpid > 0) {
        FVTup prefix(flg[warpid - 1], OP::remVolatile(ptr[warpid - 1]));
        res = LiftOP<OP>::apply(prefix, res);
    }
    return res;
}

/*****************************************/
/*** 4. Kernels                        ***/
/*****************************************/

/**
 * First level of the naive reduction: `d_out[t] = mapFun(d_in[2t]) op mapFun(d_in[2t+1])`
 * for the `T = ceil(N/2)` threads, padding with the identity past `N`. No shared memory.
 */
template<class OP>
__global__ void
redNaiveKernel1( typename OP::RedElTp* d_out
               , typename OP::InpElTp* d_in
               , const uint32_t N
               , const uint32_t T
) {
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < T) {
        typename OP::RedElTp el0 = OP::mapFun(d_in[2 * gid]);
        typename OP::RedElTp el1 = (2 * gid + 1 < N) ? OP::mapFun(d_in[2 * gid + 1]) : OP::identity();
        d_out[gid] = OP::apply(el0, el1);
    }
}

/**
 * Later levels of the naive reduction, in place in `d_out`: the `N` partial results at
 * `offs_inp` are combined pairwise into the `T = ceil(N/2)` results at `offs_out`.
 */
template<class OP>
__global__ void
redNaiveKernel2( typename OP::RedElTp* d_out
               , const uint32_t offs_inp
               , const uint32_t offs_out
               , const uint32_t N
               , const uint32_t T
) {
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < T) {
        typename OP::RedElTp el0 = d_out[offs_inp + 2 * gid];
        typename OP::RedElTp el1 = (2 * gid + 1 < N) ? d_out[offs_inp + 2 * gid + 1] : OP::identity();
        d_out[offs_out + gid] = OP::apply(el0, el1);
    }
}

/**
 * TASK reduce-block (1 of 2): reduce `d_inout[0 .. N)` to `d_inout[0]` with ONE block of
 * `closestMul32(N)` threads (N <= 1024) and `blockDim.x` elements of shared memory.
 * The loading is given; write the in-block reduction and publish the result.
 * Constraints: combine in index order (the operator need not be commutative) and let a
 * single thread write the result.
 */
template<class OP>
__global__ void
redAssoc1Block( typename OP::RedElTp* d_inout
              , const uint32_t N
) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;
    typename OP::RedElTp elm = OP::identity();
    if (threadIdx.x < N) { elm = d_inout[threadIdx.x]; }
    shmem_red[threadIdx.x] = elm;
    __syncthreads();

    // BEGIN SOLUTION reduce-block
    elm = scanIncBlock<OP>(shmem_red, threadIdx.x);
    if (threadIdx.x == blockDim.x - 1) { d_inout[0] = elm; }
    // STUB
    // if (threadIdx.x == 0) { d_inout[0] = elm; }
    // END SOLUTION
}

/**
 * TASK reduce-block (2 of 2): first stage of a reduction with a COMMUTATIVE operator.
 * The `T = gridDim.x * blockDim.x` threads each reduce the elements `gid, gid + T, gid + 2T, ...`
 * (a stride of T keeps every warp's reads coalesced, and commutativity makes the order free);
 * then each block reduces its `blockDim.x` partial results and writes one to `d_out[blockIdx.x]`.
 * The per-thread part is given; write the in-block reduction (shared memory of `blockDim.x`
 * elements) and publish the block's result with a single thread.
 */
template<class OP>
__global__ void
redCommuKernel( typename OP::RedElTp* d_out
              , typename OP::InpElTp* d_in
              , const uint32_t N
              , const uint32_t T
) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;

    // Four independent loads in flight per thread: one at a time cannot keep HBM busy.
    typename OP::RedElTp acc = OP::identity();
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * T < N; i += 4 * T) {
        typename OP::InpElTp e0 = d_in[i];
        typename OP::InpElTp e1 = d_in[i + T];
        typename OP::InpElTp e2 = d_in[i + 2 * T];
        typename OP::InpElTp e3 = d_in[i + 3 * T];
        typename OP::RedElTp r01 = OP::apply(OP::mapFun(e0), OP::mapFun(e1));
        typename OP::RedElTp r23 = OP::apply(OP::mapFun(e2), OP::mapFun(e3));
        acc = OP::apply(acc, OP::apply(r01, r23));
    }
    for (; i < N; i += T) {
        acc = OP::apply(acc, OP::mapFun(d_in[i]));
    }
    shmem_red[threadIdx.x] = acc;
    __syncthreads();

    // BEGIN SOLUTION reduce-block
    acc = scanIncBlock<OP>(shmem_red, threadIdx.x);
    if (threadIdx.x == blockDim.x - 1) { d_out[blockIdx.x] = acc; }
    // STUB
    // if (threadIdx.x == 0) { d_out[blockIdx.x] = acc; }
    // END SOLUTION
}

/**
 * First phase of a scan with a COMMUTATIVE operator: block `b` reduces the same consecutive
 * range of `elems_per_block` elements as `redAssocKernel` does, to `d_tmp[b]`. Commutativity
 * lets its threads stride over the range, so the reads are coalesced without staging through
 * shared memory, and the block reduces once at the end instead of once per tile.
 * Shared memory: `blockDim.x * sizeof(RedElTp)` bytes.
 */
template<class OP>
__global__ void
redCommuRangeKernel( typename OP::RedElTp* d_tmp
                   , typename OP::InpElTp* d_in
                   , const uint32_t N
                   , const uint32_t elems_per_block
) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;
    const uint64_t start = uint64_t(blockIdx.x) * elems_per_block;
    const uint32_t end   = static_cast<uint32_t>(min(uint64_t(N), start + elems_per_block));
    const uint32_t B     = blockDim.x;

    // Four independent loads in flight per thread, as in redCommuKernel.
    typename OP::RedElTp acc = OP::identity();
    uint32_t i = static_cast<uint32_t>(start) + threadIdx.x;
    for (; i + 3 * B < end; i += 4 * B) {
        typename OP::InpElTp e0 = d_in[i];
        typename OP::InpElTp e1 = d_in[i + B];
        typename OP::InpElTp e2 = d_in[i + 2 * B];
        typename OP::InpElTp e3 = d_in[i + 3 * B];
        typename OP::RedElTp r01 = OP::apply(OP::mapFun(e0), OP::mapFun(e1));
        typename OP::RedElTp r23 = OP::apply(OP::mapFun(e2), OP::mapFun(e3));
        acc = OP::apply(acc, OP::apply(r01, r23));
    }
    for (; i < end; i += B) {
        acc = OP::apply(acc, OP::mapFun(d_in[i]));
    }
    shmem_red[threadIdx.x] = acc;
    __syncthreads();
    acc = scanIncBlock<OP>(shmem_red, threadIdx.x);
    if (threadIdx.x == B - 1) { d_tmp[blockIdx.x] = acc; }
}

/**
 * The widest access (16, 8 or 4 bytes, else one element) that a run of RUN elements of type T
 * divides into: the word `loadRun` and `storeRun` move.
 */
template<class T, uint32_t RUN>
using RunWord = std::conditional_t<RUN * sizeof(T) % 16 == 0, int4,
                std::conditional_t<RUN * sizeof(T) % 8 == 0, int2,
                std::conditional_t<RUN * sizeof(T) % 4 == 0, int, T>>>;

/**
 * `run[i] = d_src[start + i]` for the RUN elements from `start`, `pad` at and past `end`.
 * Where the run is whole and aligned it is read in the widest words it divides into: when the
 * lanes of a warp read consecutive runs, the warp then reads contiguous memory in few
 * instructions, with no staging through shared memory (the kernels that keep the order of an
 * operator that need not be commutative read their input this way: each lane combines
 * consecutive elements). Those kernels hold runs in registers, so they say
 * `__launch_bounds__(1024)`: blocks of every size up to 1024 must launch, and without it an
 * operator's kernel could need more registers than a block of 1024 threads may have.
 */
template<class T, uint32_t RUN>
__device__ inline void
loadRun( const T* d_src
       , const uint64_t start
       , const uint64_t end
       , const T pad
       , T (&run)[RUN]
) {
    typedef RunWord<T, RUN> Word;
    if (start + RUN <= end && reinterpret_cast<uintptr_t>(d_src + start) % sizeof(Word) == 0) {
        const Word* words = reinterpret_cast<const Word*>(d_src + start);
        #pragma unroll
        for (uint32_t w = 0; w < RUN * sizeof(T) / sizeof(Word); w++) {
            const Word word = words[w];
            memcpy(reinterpret_cast<char*>(run) + w * sizeof(Word), &word, sizeof(Word));
        }
        return;
    }
    #pragma unroll
    for (uint32_t i = 0; i < RUN; i++) {
        run[i] = start + i < end ? d_src[start + i] : pad;
    }
}

/**
 * `d_dst[start + i] = run[i]` for the RUN elements from `start` that lie before `end`, in
 * the widest words where the run is whole and aligned: the twin of `loadRun`.
 */
template<class T, uint32_t RUN>
__device__ inline void
storeRun( T* d_dst
        , const uint64_t start
        , const uint64_t end
        , const T (&run)[RUN]
) {
    typedef RunWord<T, RUN> Word;
    if (start + RUN <= end && reinterpret_cast<uintptr_t>(d_dst + start) % sizeof(Word) == 0) {
        Word* words = reinterpret_cast<Word*>(d_dst + start);
        #pragma unroll
        for (uint32_t w = 0; w < RUN * sizeof(T) / sizeof(Word); w++) {
            Word word;
            memcpy(static_cast<void*>(&word), reinterpret_cast<const char*>(run) + w * sizeof(Word), sizeof(Word));
            words[w] = word;
        }
        return;
    }
    #pragma unroll
    for (uint32_t i = 0; i < RUN; i++) {
        if (start + i < end) { d_dst[start + i] = run[i]; }
    }
}

/**
 * `value` of lane `source % WARP` of the calling warp, for any element made of 4-byte words
 * such as MyInt4: a shuffle moves one word. Every lane of the warp calls it.
 */
template<class T>
__device__ inline T
shuffleFrom( const T& value, const uint32_t source ) {
    static_assert(sizeof(T) % sizeof(int) == 0, "shuffleFrom moves whole 4-byte words");
    // Copied word by word (memcpy, not an int pointer into `value`, which the compiler may
    // assume never changes a char member such as ValFlg's flag).
    int words[sizeof(T) / sizeof(int)];
    memcpy(words, static_cast<const void*>(&value), sizeof(T));
    #pragma unroll
    for (uint32_t w = 0; w < sizeof(T) / sizeof(int); w++) {
        words[w] = __shfl_sync(0xFFFFFFFFu, words[w], source % WARP);
    }
    T moved = value;
    memcpy(static_cast<void*>(&moved), words, sizeof(T));
    return moved;
}

/**
 * Reduces the 32 values of the calling warp in lane order, for an operator that need not be
 * commutative: after the step of distance h, lane `l` (a multiple of 2h) holds the reduction
 * of lanes `l .. l + 2h - 1`, its own value on the left. Lane 0 returns the warp's total, the
 * other lanes partial results. Every lane of the warp calls it.
 */
template<class OP>
__device__ inline typename OP::RedElTp
reduceWarpInOrder( typename OP::RedElTp value ) {
    const uint32_t lane = threadIdx.x & (WARP - 1);
    #pragma unroll
    for (uint32_t h = 1; h < WARP; h <<= 1) {
        typename OP::RedElTp right = shuffleFrom(value, lane + h);
        value = OP::apply(value, right);
    }
    return value;
}

/**
 * Inclusive scan of the 32 values of the calling warp in lane order, in registers: lane `l`
 * returns the reduction of lanes `0 .. l`. Every lane of the warp calls it.
 */
template<class OP>
__device__ inline typename OP::RedElTp
scanWarpInOrder( typename OP::RedElTp value ) {
    const uint32_t lane = threadIdx.x & (WARP - 1);
    #pragma unroll
    for (uint32_t h = 1; h < WARP; h <<= 1) {
        typename OP::RedElTp left = shuffleFrom(value, lane - h);
        if (lane >= h) { value = OP::apply(left, value); }
    }
    return value;
}

/**
 * Reduces, in warp order, the totals of the block's warps (`warp_total` in each warp's lane
 * 0), through `blockDim.x / WARP` elements of shared memory. Thread 0 returns the block's
 * total. Every thread of the block calls it.
 */
template<class OP>
__device__ inline typename OP::RedElTp
reduceWarpTotals( const typename OP::RedElTp warp_total, typename OP::RedElTp* shmem_totals ) {
    const uint32_t lane   = threadIdx.x & (WARP - 1);
    const uint32_t warpid = threadIdx.x >> lgWARP;
    if (lane == 0) { shmem_totals[warpid] = warp_total; }
    __syncthreads();
    typename OP::RedElTp total = OP::identity();
    if (warpid == 0) {
        if (lane < blockDim.x / WARP) { total = shmem_totals[lane]; }
        total = reduceWarpInOrder<OP>(total);
    }
    return total;
}

/** Consecutive elements each lane reduces per step in `redAssocKernel` (16 ints: 64 bytes). */
constexpr uint32_t RUN_PER_LANE = 16;

/**
 * Consecutive pairs each lane takes per step in the segmented kernels: 32 bytes of results
 * (8 ints), fewer of larger results, so that a block of 1024 threads keeps its registers.
 */
template<class OP>
__device__ __host__ constexpr uint32_t sgmRunPerLane() {
    return sizeof(typename OP::RedElTp) >= 32 ? 1 : 32 / sizeof(typename OP::RedElTp);
}

/**
 * The consecutive range of the calling warp in a block's range of `num_seq_chunks * CHUNK *
 * blockDim.x` elements: the block's range cut in one run per warp, in warp order, `[*start, *end)`.
 */
template<uint32_t CHUNK>
__device__ inline void
warpRange( const uint32_t N, const uint32_t num_seq_chunks, uint64_t* start, uint64_t* end ) {
    const uint64_t elems_per_warp = uint64_t(num_seq_chunks) * CHUNK * WARP;
    const uint64_t warp_index     = uint64_t(blockIdx.x) * (blockDim.x / WARP) + (threadIdx.x >> lgWARP);
    *start = warp_index * elems_per_warp;
    *end   = min(uint64_t(N), *start + elems_per_warp);
}

/**
 * First stage of a reduction with an operator that need NOT be commutative: block `b`
 * reduces the `num_seq_chunks * CHUNK * blockDim.x` consecutive elements starting at
 * `b * num_seq_chunks * CHUNK * blockDim.x` and writes the result to `d_tmp[b]`.
 * Order matters, so each warp reduces its own consecutive part of the block's range
 * (`warpRange`), in steps of WARP * RUN_PER_LANE elements: lane `l` reduces the run of
 * RUN_PER_LANE consecutive elements at `l * RUN_PER_LANE` in registers (`loadRun`: the
 * warp's loads cover contiguous memory), the warp combines its lanes' totals in lane order
 * (`reduceWarpInOrder`), and its lane 0 adds that to the warp's total. The block meets at a
 * barrier once, at the end, to combine its warps' totals in warp order. (Staging each tile
 * through shared memory and scanning it with the block, as the course's version does, costs
 * several barriers per tile: 0.23x the speed of CUB's reduction with Mssp.)
 * Shared memory: `blockDim.x / WARP * sizeof(RedElTp)` bytes (more is fine).
 */
template<class OP, uint32_t CHUNK>
__global__ void __launch_bounds__(1024)
redAssocKernel( typename OP::RedElTp* d_tmp
              , typename OP::InpElTp* d_in
              , const uint32_t N
              , const uint32_t num_seq_chunks
) {
    extern __shared__ char sh_mem[];
    const uint32_t lane = threadIdx.x & (WARP - 1);
    uint64_t warp_start, warp_end;
    warpRange<CHUNK>(N, num_seq_chunks, &warp_start, &warp_end);

    // Two steps at a time: both steps' loads are in flight before either's shuffles (one
    // step at a time reached 0.91x of CUB's reduction, two 0.98x; docs/performance.md).
    constexpr uint32_t STEPS = 2;
    typename OP::RedElTp warp_total = OP::identity();
    for (uint64_t step = warp_start; step < warp_end; step += STEPS * WARP * RUN_PER_LANE) {
        typename OP::InpElTp run[STEPS][RUN_PER_LANE];
        #pragma unroll
        for (uint32_t s = 0; s < STEPS; s++) {
            loadRun(d_in, step + (s * WARP + lane) * RUN_PER_LANE, warp_end, OP::identInp(), run[s]);
        }
        #pragma unroll
        for (uint32_t s = 0; s < STEPS; s++) {
            typename OP::RedElTp acc = OP::identity();
            #pragma unroll
            for (uint32_t i = 0; i < RUN_PER_LANE; i++) {
                typename OP::RedElTp elm = OP::mapFun(run[s][i]);
                acc = OP::apply(acc, elm);
            }
            typename OP::RedElTp step_total = reduceWarpInOrder<OP>(acc);
            warp_total = OP::apply(warp_total, step_total);
        }
    }

    const typename OP::RedElTp total = reduceWarpTotals<OP>(warp_total, (typename OP::RedElTp*)sh_mem);
    if (threadIdx.x == 0) { d_tmp[blockIdx.x] = total; }
}

/**
 * Inclusive scan of `d_inout[0 .. N)` in place, N <= 1024, by ONE block of `closestMul32(N)`
 * threads with `blockDim.x` elements of shared memory: the middle phase of `scanInc`.
 */
template<class OP>
__global__ void
scan1Block( typename OP::RedElTp* d_inout
          , const uint32_t N
) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;
    typename OP::RedElTp elm = OP::identity();
    if (threadIdx.x < N) { elm = d_inout[threadIdx.x]; }
    shmem_red[threadIdx.x] = elm;
    __syncthreads();
    elm = scanIncBlock<OP>(shmem_red, threadIdx.x);
    if (threadIdx.x < N) { d_inout[threadIdx.x] = elm; }
}

/**
 * TASK scan-multi (1 of 2): the third phase of the multi-block scan.
 *
 * Block `b` scans the same consecutive range as in `redAssocKernel`, in `num_seq_chunks`
 * iterations of `CHUNK * blockDim.x` elements, starting from the prefix `d_tmp[b-1]` (the
 * inclusive scan of the block totals; the identity for block 0), and writes `d_out`.
 * Per iteration: copy the tile to shared memory (coalesced); each thread scans its CHUNK
 * consecutive elements sequentially in registers; the block scans the per-thread totals with
 * `scanIncBlock`; each thread adds the prefix of the threads before it and of the previous
 * iterations and blocks; the tile goes back to global memory (coalesced).
 *
 * Constraints: one pass over the input and one over the output (no other global traffic);
 * the shared memory is `blockDim.x * CHUNK * max(sizeof(InpElTp), sizeof(RedElTp))` bytes
 * and is reused by the input and result tiles, so each reuse needs a barrier first;
 * combine in index order (Mssp is not commutative).
 */
template<class OP, uint32_t CHUNK>
__global__ void
scan3rdKernel( typename OP::RedElTp* d_out
             , typename OP::InpElTp* d_in
             , typename OP::RedElTp* d_tmp
             , const uint32_t N
             , const uint32_t num_seq_chunks
) {
    extern __shared__ char sh_mem[];
    volatile typename OP::InpElTp* shmem_inp = (typename OP::InpElTp*)sh_mem;
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;

    const uint32_t num_elems_per_iter  = CHUNK * blockDim.x;
    const uint32_t num_elems_per_block = num_seq_chunks * num_elems_per_iter;
    const uint32_t inp_block_offs      = num_elems_per_block * blockIdx.x;

    // BEGIN SOLUTION scan-multi
    typename OP::RedElTp accum = OP::identity();
    if (blockIdx.x > 0) { accum = d_tmp[blockIdx.x - 1]; }

    for (uint32_t seq = 0; seq < num_elems_per_block; seq += num_elems_per_iter) {
        const uint32_t tile_offs = inp_block_offs + seq;
        copyFromGlb2ShrMem<typename OP::InpElTp, CHUNK>
            (tile_offs, N, OP::identInp(), d_in, shmem_inp);

        // each thread scans its CHUNK consecutive elements in registers
        typename OP::RedElTp chunk[CHUNK];
        typename OP::RedElTp acc = OP::identity();
        #pragma unroll
        for (uint32_t i = 0; i < CHUNK; i++) {
            typename OP::InpElTp elm = shmem_inp[threadIdx.x * CHUNK + i];
            acc = OP::apply(acc, OP::mapFun(elm));
            chunk[i] = acc;
        }
        __syncthreads();

        // the block scans the per-thread totals
        shmem_red[threadIdx.x] = acc;
        __syncthreads();
        acc = scanIncBlock<OP>(shmem_red, threadIdx.x);
        __syncthreads();
        shmem_red[threadIdx.x] = acc;
        __syncthreads();

        typename OP::RedElTp prefix = accum;
        if (threadIdx.x > 0) {
            typename OP::RedElTp before = OP::remVolatile(shmem_red[threadIdx.x - 1]);
            prefix = OP::apply(prefix, before);
        }
        typename OP::RedElTp tile_total = OP::remVolatile(shmem_red[blockDim.x - 1]);
        __syncthreads();

        #pragma unroll
        for (uint32_t i = 0; i < CHUNK; i++) {
            shmem_red[threadIdx.x * CHUNK + i] = OP::apply(prefix, chunk[i]);
        }
        __syncthreads();
        copyFromShr2GlbMem<typename OP::RedElTp, CHUNK>(tile_offs, N, d_out, shmem_red);
        __syncthreads();

        accum = OP::apply(accum, tile_total);
    }
    // STUB
    // // Your scan goes here; until then the output is left unwritten.
    // (void)shmem_inp; (void)shmem_red; (void)d_out; (void)d_in; (void)d_tmp; (void)N;
    // (void)inp_block_offs;
    // END SOLUTION
}

/**
 * Byte offset of the flags in the shared memory of the segmented-scan kernels: the values
 * (`blockDim.x * CHUNK` elements of the larger of the two element types) come first.
 */
template<class OP, uint32_t CHUNK>
__device__ __host__ inline uint32_t sgmFlagsOffset(const uint32_t block_size) {
    const uint32_t elem = sizeof(typename OP::InpElTp) > sizeof(typename OP::RedElTp)
                        ? sizeof(typename OP::InpElTp) : sizeof(typename OP::RedElTp);
    return block_size * CHUNK * elem;
}

/**
 * Segmented inclusive scan of `d_vals`/`d_flags[0 .. N)` in place, N <= 1024, by ONE block of
 * `closestMul32(N)` threads; shared memory: `blockDim.x * (sizeof(RedElTp) + 1)` bytes.
 */
template<class OP>
__global__ void
sgmScan1Block( typename OP::RedElTp* d_vals
             , char* d_flags
             , const uint32_t N
) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;
    volatile char* shmem_flg = (char*)(sh_mem + blockDim.x * sizeof(typename OP::RedElTp));
    typename OP::RedElTp val = OP::identity();
    char flg = 0;
    if (threadIdx.x < N) {
        val = d_vals[threadIdx.x];
        flg = d_flags[threadIdx.x];
    }
    shmem_red[threadIdx.x] = val;
    shmem_flg[threadIdx.x] = flg;
    __syncthreads();

    ValFlg<typename OP::RedElTp> res = sgmScanIncBlock<OP, char>(shmem_red, shmem_flg, threadIdx.x);
    if (threadIdx.x < N) {
        d_vals[threadIdx.x]  = res.v;
        d_flags[threadIdx.x] = res.f;
    }
}

/**
 * First phase of the segmented scan: block `b` reduces its consecutive range with the lifted
 * operator, as `redAssocKernel` does (each warp its part, each lane runs of
 * `sgmRunPerLane<OP>()` consecutive flag-value pairs), and writes the pair to
 * `d_tmp_vals[b]`, `d_tmp_flag[b]`. Shared memory: `blockDim.x / WARP * sizeof(ValFlg<RedElTp>)`
 * bytes (more is fine).
 */
template<class OP, uint32_t CHUNK>
__global__ void __launch_bounds__(1024)
redSgmScanKernel( char* d_tmp_flag
                , typename OP::RedElTp* d_tmp_vals
                , char* d_fl
                , typename OP::InpElTp* d_in
                , const uint32_t N
                , const uint32_t num_seq_chunks
) {
    typedef ValFlg<typename OP::RedElTp> FVTup;
    extern __shared__ char sh_mem[];
    const uint32_t lane = threadIdx.x & (WARP - 1);
    uint64_t warp_start, warp_end;
    warpRange<CHUNK>(N, num_seq_chunks, &warp_start, &warp_end);

    constexpr uint32_t RUN = sgmRunPerLane<OP>();
    FVTup warp_total = LiftOP<OP>::identity();
    for (uint64_t step = warp_start; step < warp_end; step += WARP * RUN) {
        typename OP::InpElTp run[RUN];
        char flags[RUN];
        loadRun(d_in, step + lane * RUN, warp_end, OP::identInp(), run);
        loadRun(d_fl, step + lane * RUN, warp_end, char(0), flags);
        FVTup acc = LiftOP<OP>::identity();
        #pragma unroll
        for (uint32_t i = 0; i < RUN; i++) {
            FVTup next(flags[i], OP::mapFun(run[i]));
            acc = LiftOP<OP>::apply(acc, next);
        }
        FVTup step_total = reduceWarpInOrder<LiftOP<OP>>(acc);
        warp_total = LiftOP<OP>::apply(warp_total, step_total);
    }

    const FVTup total = reduceWarpTotals<LiftOP<OP>>(warp_total, (FVTup*)sh_mem);
    if (threadIdx.x == 0) {
        d_tmp_vals[blockIdx.x] = total.v;
        d_tmp_flag[blockIdx.x] = total.f;
    }
}

/**
 * Third phase of the segmented scan, the segmented twin of `scan3rdKernel`: block `b` scans
 * its range starting from the pair `(d_tmp_flag[b-1], d_tmp_vals[b-1])` and writes `d_out`.
 * It walks the range in tiles of `blockDim.x * RUN` pairs, each lane a run of RUN =
 * `sgmRunPerLane<OP>()` consecutive pairs, so that reads and writes are wide accesses straight
 * from registers (`loadRun`, `storeRun`): the lane scans its run; the warp scans its lanes'
 * totals with shuffles (`scanWarpInOrder`); the warps' totals meet in shared memory at one
 * barrier per tile, where each warp scans them to find what the warps before it add. (Staging
 * each tile through shared memory and scanning it with `sgmScanIncBlock` costs seven barriers
 * a tile and 156 registers a thread: with it `sgmScanInc` ran at 54% of the speed that its
 * memory traffic allows.)
 * Shared memory: `2 * blockDim.x / WARP * sizeof(ValFlg<RedElTp>)` bytes (more is fine).
 */
template<class OP, uint32_t CHUNK>
__global__ void __launch_bounds__(1024)
sgmScan3rdKernel( typename OP::RedElTp* d_out
                , typename OP::InpElTp* d_inp
                , char* d_flg
                , typename OP::RedElTp* d_tmp_vals
                , char* d_tmp_flag
                , const uint32_t N
                , const uint32_t num_seq_chunks
) {
    typedef ValFlg<typename OP::RedElTp> FVTup;
    extern __shared__ char sh_mem[];
    // Two sets of warp totals, one for even tiles and one for odd: a warp that runs ahead
    // writes the next tile's set while the others still read this one, so one barrier a tile
    // is enough.
    FVTup* warp_totals = (FVTup*)sh_mem;
    const uint32_t lane      = threadIdx.x & (WARP - 1);
    const uint32_t warpid    = threadIdx.x >> lgWARP;
    const uint32_t num_warps = blockDim.x / WARP;
    const uint64_t elems_per_block = uint64_t(num_seq_chunks) * CHUNK * blockDim.x;
    const uint64_t block_start     = blockIdx.x * elems_per_block;
    const uint64_t block_end       = min(uint64_t(N), block_start + elems_per_block);

    FVTup accum = LiftOP<OP>::identity();
    if (blockIdx.x > 0) { accum = FVTup(d_tmp_flag[blockIdx.x - 1], d_tmp_vals[blockIdx.x - 1]); }

    constexpr uint32_t RUN = sgmRunPerLane<OP>();
    uint32_t set = 0;
    for (uint64_t tile = block_start; tile < block_end; tile += uint64_t(blockDim.x) * RUN) {
        const uint64_t run_start = tile + uint64_t(threadIdx.x) * RUN;
        typename OP::InpElTp inp[RUN];
        char flags[RUN];
        loadRun(d_inp, run_start, block_end, OP::identInp(), inp);
        loadRun(d_flg, run_start, block_end, char(0), flags);

        // the lane's run, scanned; elements from `first_flag` on start a segment in the run
        typename OP::RedElTp vals[RUN];
        uint32_t first_flag = RUN;
        FVTup acc = LiftOP<OP>::identity();
        #pragma unroll
        for (uint32_t i = 0; i < RUN; i++) {
            FVTup next(flags[i], OP::mapFun(inp[i]));
            acc = LiftOP<OP>::apply(acc, next);
            vals[i] = acc.v;
            if (flags[i] != 0 && first_flag == RUN) { first_flag = i; }
        }

        // what the lanes before this one in the warp add, and the warp's total
        const FVTup lane_scan = scanWarpInOrder<LiftOP<OP>>(acc);
        FVTup lanes_before = shuffleFrom(lane_scan, lane - 1);
        if (lane == 0) { lanes_before = LiftOP<OP>::identity(); }
        if (lane == WARP - 1) { warp_totals[set * num_warps + warpid] = lane_scan; }
        __syncthreads();

        // what the warps before this one add, and the tile's total
        FVTup warp_scan = LiftOP<OP>::identity();
        if (lane < num_warps) { warp_scan = warp_totals[set * num_warps + lane]; }
        warp_scan = scanWarpInOrder<LiftOP<OP>>(warp_scan);
        FVTup warps_before = shuffleFrom(warp_scan, warpid - 1);
        if (warpid == 0) { warps_before = LiftOP<OP>::identity(); }
        const FVTup tile_total = shuffleFrom(warp_scan, num_warps - 1);

        const FVTup prefix = LiftOP<OP>::apply(LiftOP<OP>::apply(accum, warps_before), lanes_before);
        #pragma unroll
        for (uint32_t i = 0; i < RUN; i++) {
            if (i < first_flag) { vals[i] = OP::apply(prefix.v, vals[i]); }
        }
        storeRun(d_out, run_start, block_end, vals);

        accum = LiftOP<OP>::apply(accum, tile_total);
        set ^= 1;
    }
}

#endif // PBB_KERNELS_CU_H
