// The device side on the CPU backend: the built-in variables, barriers, warp collectives,
// atomics, vector types and math that kernels use. Each CUDA thread is a fiber; a barrier or a
// warp collective suspends it until the threads it waits for arrive (see scheduler.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <type_traits>
#include "kernellab_cpu/runtime_api.hpp"

namespace kernellab::cpu {

/** A place in the student's source: every barrier and collective names the one it was called at. */
struct Site {
    const char* file;
    int line;
};

/** What a suspended thread waits at. */
enum class Collective : uint8_t {
    SyncWarp, Shfl, ShflUp, ShflDown, ShflXor, Ballot, All, Any,
};

/** The state of one CUDA thread (one fiber), as device code sees it. */
struct ThreadState {
    uint3 thread_idx;
    uint3 block_idx;
    dim3 block_dim;
    dim3 grid_dim;
    unsigned lane;
    // Set by a thread entering a collective, read by the scheduler.
    uint64_t value;
    int source;      // source lane (shuffles), or width
    // Set by the scheduler when it releases the collective.
    uint64_t result;
};

/** The thread running on this OS thread (each block runs wholly on one OS thread). */
extern thread_local ThreadState* current_thread;

void syncThreads(Site site);
int syncThreadsReduce(Site site, int predicate, int kind);
/** The block barriers the calling thread has passed since its block started (kernellab/instrumented.hpp). */
unsigned barriersPassed();
/** Suspends the calling lane at a warp collective until every lane of `mask` is there. */
void warpCollective(Site site, Collective kind, unsigned mask);
unsigned activeMask();
void threadFence();
/**
 * Holds the calling lane in a launch that accepts the lockstep idiom (warp_synchronous = "warn");
 * nothing elsewhere, or in host code. The lane waits until no other thread can run on (each has
 * reached a step, a barrier, a warp collective or its end); then the held lanes go on together,
 * each warp's from the highest lane down (scheduler.cpp, releaseStep). The tests' operators call
 * it before reading their operands and again before returning the result that is written
 * (kernellab/lockstep.hpp), so lanes that apply them together read what a warp's lanes running
 * in lockstep on a GPU read.
 */
void lockstepStep();

enum : int { kReduceCount = 0, kReduceAnd = 1, kReduceOr = 2 };

template<class T>
uint64_t toBits(T value) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                  "warp shuffles move values of at most 8 bytes");
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
}
template<class T>
T fromBits(uint64_t bits) {
    T value;
    std::memcpy(&value, &bits, sizeof(T));
    return value;
}

template<class T>
T shuffle(Site site, Collective kind, unsigned mask, T var, int source, int width) {
    ThreadState* self = current_thread;
    self->value = toBits(var);
    self->source = source;
    self->result = unsigned(width);
    warpCollective(site, kind, mask);
    return fromBits<T>(current_thread->result);
}

inline unsigned vote(Site site, Collective kind, unsigned mask, int predicate) {
    current_thread->value = predicate != 0;
    warpCollective(site, kind, mask);
    return unsigned(current_thread->result);
}

/** Atomic read-modify-write through a compare-and-swap loop, for the operations GCC lacks. */
template<class T, class Update>
T atomicUpdate(T* address, Update update) {
    T old = __atomic_load_n(address, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(address, &old, update(old), true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return old;
}
template<class F, class Update>
F atomicUpdateFloat(F* address, Update update) {
    typedef std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t> Bits;
    Bits* bits = reinterpret_cast<Bits*>(address);
    Bits old = __atomic_load_n(bits, __ATOMIC_RELAXED);
    for (;;) {
        const F old_value = fromBits<F>(old);
        const Bits next = Bits(toBits(update(old_value)));
        if (__atomic_compare_exchange_n(bits, &old, next, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
            return old_value;
        }
    }
}

}  // namespace kernellab::cpu

#define KL_CPU_SITE (::kernellab::cpu::Site{__FILE__, __LINE__})

// Built-in variables of the running thread.
#define threadIdx (static_cast<const uint3&>(::kernellab::cpu::current_thread->thread_idx))
#define blockIdx (static_cast<const uint3&>(::kernellab::cpu::current_thread->block_idx))
#define blockDim (static_cast<const dim3&>(::kernellab::cpu::current_thread->block_dim))
#define gridDim (static_cast<const dim3&>(::kernellab::cpu::current_thread->grid_dim))
constexpr int warpSize = 32;

// Barriers and warp collectives, each with the site it is called from.
#define __syncthreads() ::kernellab::cpu::syncThreads(KL_CPU_SITE)
#define __syncthreads_count(p) ::kernellab::cpu::syncThreadsReduce(KL_CPU_SITE, (p), ::kernellab::cpu::kReduceCount)
#define __syncthreads_and(p) ::kernellab::cpu::syncThreadsReduce(KL_CPU_SITE, (p), ::kernellab::cpu::kReduceAnd)
#define __syncthreads_or(p) ::kernellab::cpu::syncThreadsReduce(KL_CPU_SITE, (p), ::kernellab::cpu::kReduceOr)
#define __syncwarp(...) ::kernellab::cpu::syncWarpAt(KL_CPU_SITE, ##__VA_ARGS__)
#define __shfl_sync(mask, var, lane, ...) \
    ::kernellab::cpu::shuffleAt(KL_CPU_SITE, ::kernellab::cpu::Collective::Shfl, mask, var, lane, ##__VA_ARGS__)
#define __shfl_up_sync(mask, var, delta, ...) \
    ::kernellab::cpu::shuffleAt(KL_CPU_SITE, ::kernellab::cpu::Collective::ShflUp, mask, var, delta, ##__VA_ARGS__)
#define __shfl_down_sync(mask, var, delta, ...) \
    ::kernellab::cpu::shuffleAt(KL_CPU_SITE, ::kernellab::cpu::Collective::ShflDown, mask, var, delta, ##__VA_ARGS__)
#define __shfl_xor_sync(mask, var, lane_mask, ...) \
    ::kernellab::cpu::shuffleAt(KL_CPU_SITE, ::kernellab::cpu::Collective::ShflXor, mask, var, lane_mask, ##__VA_ARGS__)
#define __ballot_sync(mask, p) ::kernellab::cpu::vote(KL_CPU_SITE, ::kernellab::cpu::Collective::Ballot, mask, (p))
#define __all_sync(mask, p) int(::kernellab::cpu::vote(KL_CPU_SITE, ::kernellab::cpu::Collective::All, mask, (p)))
#define __any_sync(mask, p) int(::kernellab::cpu::vote(KL_CPU_SITE, ::kernellab::cpu::Collective::Any, mask, (p)))

namespace kernellab::cpu {
inline void syncWarpAt(Site site, unsigned mask = 0xffffffffu) { warpCollective(site, Collective::SyncWarp, mask); }
template<class T>
T shuffleAt(Site site, Collective kind, unsigned mask, T var, int source, int width = warpSize) {
    return shuffle(site, kind, mask, var, source, width);
}
}  // namespace kernellab::cpu

inline unsigned __activemask() { return ::kernellab::cpu::activeMask(); }
inline void __threadfence() { ::kernellab::cpu::threadFence(); }
inline void __threadfence_block() { ::kernellab::cpu::threadFence(); }
inline void __threadfence_system() { ::kernellab::cpu::threadFence(); }

/** Cycle counter: the host's time in nanoseconds, which also only ever grows. */
long long int clock64();
/** A hint on the GPU; the CPU backend has nothing to wait for. */
inline void __nanosleep(unsigned int) {}

template<class T>
inline T __ldg(const T* address) { return *address; }

// Atomics on int, unsigned, unsigned long long (and long long where CUDA has them), float, double.
#define KL_CPU_ATOMIC_INTEGER(T)                                                                          \
    inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }                  \
    inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }                  \
    inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }                \
    inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }                  \
    inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }                    \
    inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }                  \
    inline T atomicMin(T* a, T v) {                                                                       \
        return ::kernellab::cpu::atomicUpdate(a, [v](T old) { return old < v ? old : v; });              \
    }                                                                                                     \
    inline T atomicMax(T* a, T v) {                                                                       \
        return ::kernellab::cpu::atomicUpdate(a, [v](T old) { return old > v ? old : v; });              \
    }                                                                                                     \
    inline T atomicCAS(T* a, T compare, T v) {                                                            \
        __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
        return compare;                                                                                   \
    }
KL_CPU_ATOMIC_INTEGER(int)
KL_CPU_ATOMIC_INTEGER(unsigned int)
KL_CPU_ATOMIC_INTEGER(unsigned long long int)
KL_CPU_ATOMIC_INTEGER(long long int)
#undef KL_CPU_ATOMIC_INTEGER

inline unsigned int atomicInc(unsigned int* a, unsigned int limit) {
    return ::kernellab::cpu::atomicUpdate(a, [limit](unsigned int old) { return old >= limit ? 0u : old + 1; });
}
inline unsigned int atomicDec(unsigned int* a, unsigned int limit) {
    return ::kernellab::cpu::atomicUpdate(
        a, [limit](unsigned int old) { return old == 0 || old > limit ? limit : old - 1; });
}
#define KL_CPU_ATOMIC_FLOAT(F)                                                                            \
    inline F atomicAdd(F* a, F v) { return ::kernellab::cpu::atomicUpdateFloat(a, [v](F old) { return old + v; }); } \
    inline F atomicExch(F* a, F v) { return ::kernellab::cpu::atomicUpdateFloat(a, [v](F) { return v; }); }         \
    inline F atomicMin(F* a, F v) {                                                                       \
        return ::kernellab::cpu::atomicUpdateFloat(a, [v](F old) { return old < v ? old : v; });         \
    }                                                                                                     \
    inline F atomicMax(F* a, F v) {                                                                       \
        return ::kernellab::cpu::atomicUpdateFloat(a, [v](F old) { return old > v ? old : v; });         \
    }
KL_CPU_ATOMIC_FLOAT(float)
KL_CPU_ATOMIC_FLOAT(double)
#undef KL_CPU_ATOMIC_FLOAT

// min and max as CUDA declares them: overloads, not templates, so that `using namespace std`
// code still resolves `min(a, b)` without ambiguity.
#define KL_CPU_MIN_MAX(T)                                 \
    inline T min(T a, T b) { return a < b ? a : b; }      \
    inline T max(T a, T b) { return a > b ? a : b; }
KL_CPU_MIN_MAX(int)
KL_CPU_MIN_MAX(unsigned int)
KL_CPU_MIN_MAX(long int)
KL_CPU_MIN_MAX(unsigned long int)
KL_CPU_MIN_MAX(long long int)
KL_CPU_MIN_MAX(unsigned long long int)
KL_CPU_MIN_MAX(float)
KL_CPU_MIN_MAX(double)
#undef KL_CPU_MIN_MAX
// Mixed signedness converts to unsigned, as CUDA's overloads do.
inline unsigned int min(int a, unsigned int b) { return min(unsigned(a), b); }
inline unsigned int min(unsigned int a, int b) { return min(a, unsigned(b)); }
inline unsigned int max(int a, unsigned int b) { return max(unsigned(a), b); }
inline unsigned int max(unsigned int a, int b) { return max(a, unsigned(b)); }

// Integer and float intrinsics.
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    return __builtin_bswap32(x);
}
inline int __mul24(int a, int b) { return a * b; }
inline unsigned int __umul24(unsigned int a, unsigned int b) { return a * b; }
inline int __mulhi(int a, int b) { return int((long long)a * b >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) { return unsigned((unsigned long long)a * b >> 32); }
inline float __int_as_float(int x) { return ::kernellab::cpu::fromBits<float>(uint32_t(x)); }
inline int __float_as_int(float x) { return int(uint32_t(::kernellab::cpu::toBits(x))); }
inline float __uint_as_float(unsigned int x) { return ::kernellab::cpu::fromBits<float>(x); }
inline unsigned int __float_as_uint(float x) { return unsigned(::kernellab::cpu::toBits(x)); }
inline double __longlong_as_double(long long x) { return ::kernellab::cpu::fromBits<double>(uint64_t(x)); }
inline long long __double_as_longlong(double x) { return (long long)::kernellab::cpu::toBits(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }

// Vector types and their make_ functions.
#define KL_CPU_VECTOR(T, NAME, ALIGN2, ALIGN4)                                                     \
    struct NAME##1 { T x; };                                                                       \
    struct alignas(ALIGN2) NAME##2 { T x, y; };                                                    \
    struct NAME##3 { T x, y, z; };                                                                 \
    struct alignas(ALIGN4) NAME##4 { T x, y, z, w; };                                              \
    inline NAME##1 make_##NAME##1(T x) { return NAME##1{x}; }                                      \
    inline NAME##2 make_##NAME##2(T x, T y) { return NAME##2{x, y}; }                              \
    inline NAME##3 make_##NAME##3(T x, T y, T z) { return NAME##3{x, y, z}; }                     \
    inline NAME##4 make_##NAME##4(T x, T y, T z, T w) { return NAME##4{x, y, z, w}; }
KL_CPU_VECTOR(signed char, char, 2, 4)
KL_CPU_VECTOR(unsigned char, uchar, 2, 4)
KL_CPU_VECTOR(short, short, 4, 8)
KL_CPU_VECTOR(unsigned short, ushort, 4, 8)
KL_CPU_VECTOR(int, int, 8, 16)
KL_CPU_VECTOR(long long, longlong, 16, 16)
KL_CPU_VECTOR(unsigned long long, ulonglong, 16, 16)
KL_CPU_VECTOR(float, float, 8, 16)
KL_CPU_VECTOR(double, double, 16, 16)
#undef KL_CPU_VECTOR
struct uint1 { unsigned int x; };
struct alignas(8) uint2 { unsigned int x, y; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
inline uint1 make_uint1(unsigned int x) { return uint1{x}; }
inline uint2 make_uint2(unsigned int x, unsigned int y) { return uint2{x, y}; }
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { return uint4{x, y, z, w}; }
