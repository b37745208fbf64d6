// Counts the block barriers of the code under test on a GPU, for a task that says "without adding
// a __syncthreads()" (kernellab::barriersPassed, instrumented.hpp). A test translation unit
// includes this header first, before the solution: from here on each name below is a macro for a
// function that synchronizes as CUDA's does and then counts the barrier for the calling thread in
// the installed BarrierCounter. The macros are object-like, so `(__syncthreads)()`,
// `::__syncthreads()` and `&__syncthreads` count too; a student file that #defines or #undefs one
// of these names is refused at intake (a name the harness uses: grader/kernellab/static_checks.py).
//
// Counted: __syncthreads, __syncthreads_count, __syncthreads_and, __syncthreads_or and CUDA's
// syncthreads_count/_and/_or; the named barriers __barrier_sync and __barrier_sync_count, which
// cooperative groups' this_thread_block().sync() calls (its header comes after this one); and the
// cluster barrier's wait, __cluster_barrier_wait (cooperative groups' this_cluster().sync()): a
// block launched without clusters is a cluster of one, so it synchronizes the block.
// Refused: the compiler's barrier builtins behind these (__nvvm_bar0, __nvvm_barrier_sync, ...),
// which code could declare itself: each name becomes one that nothing defines, so the build
// fails ("kernellab_uncounted_barrier_builtin").
// Not seen: inline PTX (asm("bar.sync 0;"), barrier.*, mbarrier.*), libcu++'s cuda::barrier
// (mbarriers, through inline PTX), and barriers of one's own made of atomics and spinning. None of
// them gets past the CPU backend, whose runtime counts every block barrier a thread passes: it
// refuses inline PTX at build time (grader/cpu/rewrite.py), has no libcu++, and runs a block's
// threads as fibers that only switch at barriers and warp collectives, so a thread that spins
// waiting for another never lets it run and the test times out. A CPU-backend grade therefore
// fails such a task, and a GPU grade's race check (the CPU backend, for a task with
// race_check = "fail") fails its build or run. A GPU run alone vouches only for the counted names.
#pragma once

#include "kernellab/instrumented.hpp"

#ifndef KERNELLAB_CPU_BACKEND

// Defined before the macros below: these call CUDA's own barriers.
__device__ inline void kernellab_counted_syncthreads() {
    __syncthreads();
    kernellab::countBarrier();
}
__device__ inline int kernellab_counted_syncthreads_count(int predicate) {
    const int count = __syncthreads_count(predicate);
    kernellab::countBarrier();
    return count;
}
__device__ inline int kernellab_counted_syncthreads_and(int predicate) {
    const int all = __syncthreads_and(predicate);
    kernellab::countBarrier();
    return all;
}
__device__ inline int kernellab_counted_syncthreads_or(int predicate) {
    const int any = __syncthreads_or(predicate);
    kernellab::countBarrier();
    return any;
}
__device__ inline int kernellab_counted_syncthreads_count_bool(bool predicate) {
    return kernellab_counted_syncthreads_count(int(predicate));
}
__device__ inline bool kernellab_counted_syncthreads_and_bool(bool predicate) {
    return kernellab_counted_syncthreads_and(int(predicate)) != 0;
}
__device__ inline bool kernellab_counted_syncthreads_or_bool(bool predicate) {
    return kernellab_counted_syncthreads_or(int(predicate)) != 0;
}
__device__ inline void kernellab_counted_barrier_sync(unsigned id) {
    __barrier_sync(id);
    kernellab::countBarrier();
}
__device__ inline void kernellab_counted_barrier_sync_count(unsigned id, unsigned threads) {
    __barrier_sync_count(id, threads);
    kernellab::countBarrier();
}
// Declared where CUDA declares its cluster barrier (the host pass, and sm_90 on).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ inline void kernellab_counted_cluster_barrier_wait() {
    __cluster_barrier_wait();
    kernellab::countBarrier();
}
#endif

#define __syncthreads kernellab_counted_syncthreads
#define __syncthreads_count kernellab_counted_syncthreads_count
#define __syncthreads_and kernellab_counted_syncthreads_and
#define __syncthreads_or kernellab_counted_syncthreads_or
#define syncthreads_count kernellab_counted_syncthreads_count_bool
#define syncthreads_and kernellab_counted_syncthreads_and_bool
#define syncthreads_or kernellab_counted_syncthreads_or_bool
#define __barrier_sync kernellab_counted_barrier_sync
#define __barrier_sync_count kernellab_counted_barrier_sync_count
#define __cluster_barrier_wait kernellab_counted_cluster_barrier_wait

// The builtins (cicc's names): CUDA's own headers call them only in code compiled before this.
#define __nvvm_bar0 kernellab_uncounted_barrier_builtin
#define __nvvm_bar0_popc kernellab_uncounted_barrier_builtin
#define __nvvm_bar0_and kernellab_uncounted_barrier_builtin
#define __nvvm_bar0_or kernellab_uncounted_barrier_builtin
#define __nvvm_bar_sync_all kernellab_uncounted_barrier_builtin
#define __nvvm_bar_sync_all_cnt kernellab_uncounted_barrier_builtin
#define __nvvm_barrier_sync kernellab_uncounted_barrier_builtin
#define __nvvm_barrier_sync_cnt kernellab_uncounted_barrier_builtin
#define __nv_cluster_barrier_wait_impl kernellab_uncounted_barrier_builtin

#endif  // KERNELLAB_CPU_BACKEND
