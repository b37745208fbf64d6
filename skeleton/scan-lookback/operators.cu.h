// Given: the operators of the scan, the same classes as pbb's pbbKernels.cu.h (its section 1), so
// that code written for pbb runs here unchanged. You need not edit this file.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

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
