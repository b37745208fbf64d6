// kernellab's compat fixture of the PMPH course's kernels file, 2020-2023 shape: the course's
// declarations (operators taking volatile references, no copy from a volatile MyInt4, `unsigned int`
// thread indexes) with kernellab's own bodies, and the three weekly-2 tasks solved (the
// solution markers give the stubs: the 2020-2023 shape is reference/pmph-w2).
#ifndef PMPH_COMPAT_KERNELS
#define PMPH_COMPAT_KERNELS

#include <cuda_runtime.h>

__global__ void naiveMemcpy(int* d_out, int* d_inp, const uint32_t N) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) { d_out[i] = d_inp[i]; }
}

template<class T>
class Add {
  public:
    typedef T InpElTp;
    typedef T RedElTp;
    static const bool commutative = true;
    static __device__ __host__ inline T identInp()                    { return T(0); }
    static __device__ __host__ inline T mapFun(const T& el)           { return el; }
    static __device__ __host__ inline T identity()                    { return T(0); }
    static __device__ __host__ inline T apply(const T t1, const T t2) { return t2 + t1; }
    static __device__ __host__ inline bool equals(const T t1, const T t2) { return !(t1 != t2); }
    static __device__ __host__ inline T remVolatile(volatile T& t)    { return T(t); }
};

template<class T>
class ValFlg {
  public:
    T    v;
    char f;
    __device__ __host__ inline ValFlg() { f = 0; }
    __device__ __host__ inline ValFlg(const char& flag, const T& value) { f = flag; v = value; }
    __device__ __host__ inline ValFlg(const ValFlg& other) { f = other.f; v = other.v; }
    __device__ __host__ inline void operator=(const ValFlg& other) volatile { f = other.f; v = other.v; }
};

// Calls OP::apply and OP::equals on members of const pairs: compiles for Add only, as the course's.
template<class OP>
class LiftOP {
  public:
    typedef ValFlg<typename OP::RedElTp> RedElTp;
    static __device__ __host__ inline RedElTp identity() { return RedElTp(0, OP::identity()); }
    static __device__ __host__ inline RedElTp apply(const RedElTp t1, const RedElTp t2) {
        if (t2.f != 0) { return RedElTp(1, t2.v); }
        return RedElTp(t1.f, OP::apply(t1.v, t2.v));
    }
    static __device__ __host__ inline bool equals(const RedElTp t1, const RedElTp t2) {
        return t1.f == t2.f && OP::equals(t1.v, t2.v);
    }
};

class MyInt4 {
  public:
    int x; int y; int z; int w;
    __device__ __host__ inline MyInt4() : x(0), y(0), z(0), w(0) {}
    __device__ __host__ inline MyInt4(const int& a, const int& b, const int& c, const int& d) : x(a), y(b), z(c), w(d) {}
    __device__ __host__ inline MyInt4(const MyInt4& o) : x(o.x), y(o.y), z(o.z), w(o.w) {}
    __device__ __host__ inline void operator=(const MyInt4& o) volatile { x = o.x; y = o.y; z = o.z; w = o.w; }
};

class Mssp {
  public:
    typedef int32_t InpElTp;
    typedef MyInt4 RedElTp;
    static const bool commutative = false;
    static __device__ __host__ inline InpElTp identInp() { return 0; }
    static __device__ __host__ inline MyInt4 mapFun(const InpElTp& el) {
        const InpElTp pos = el < 0 ? 0 : el;
        return MyInt4(pos, pos, pos, el);
    }
    static __device__ __host__ inline MyInt4 identity() { return MyInt4(0, 0, 0, 0); }
    static __device__ __host__ inline MyInt4 apply(volatile MyInt4& a, volatile MyInt4& b) {
        const int32_t across = a.z + b.y;
        const int32_t best = max(across, max(a.x, b.x));
        return MyInt4(best, max(a.y, a.w + b.y), max(b.z, a.z + b.w), a.w + b.w);
    }
    static __device__ __host__ inline MyInt4 remVolatile(volatile MyInt4& t) {
        MyInt4 copy;
        copy.x = t.x; copy.y = t.y; copy.z = t.z; copy.w = t.w;
        return copy;
    }
    static __device__ __host__ inline bool equals(MyInt4& a, MyInt4& b) {
        return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
    }
};

// TASK scan-warp (weekly 2, task 2): the warp's inclusive scan in place, in lg(WARP) steps.
// The stub is right but takes WARP - 1 steps on lane 0.
template<class OP>
__device__ inline typename OP::RedElTp
scanIncWarp(volatile typename OP::RedElTp* ptr, const unsigned int idx) {
    const unsigned int lane = idx & (WARP - 1);
    // BEGIN SOLUTION scan-warp
    for (unsigned int step = 1; step < WARP; step <<= 1) {
        typename OP::RedElTp sum = OP::remVolatile(ptr[idx]);
        if (lane >= step) {
            typename OP::RedElTp before = OP::remVolatile(ptr[idx - step]);
            sum = OP::apply(before, sum);
        }
        __syncwarp();
        ptr[idx] = sum;
        __syncwarp();
    }
    // STUB
    // if (lane == 0) {
    //     for (unsigned int next = idx + 1; next < idx + WARP; next++) {
    //         typename OP::RedElTp before = OP::remVolatile(ptr[next - 1]);
    //         typename OP::RedElTp own = OP::remVolatile(ptr[next]);
    //         ptr[next] = OP::apply(before, own);
    //     }
    // }
    // __syncwarp();
    // END SOLUTION
    return OP::remVolatile(ptr[idx]);
}

// TASK scan-block (weekly 2, task 3): the block's inclusive scan. The stub races with blocks of
// 1024 threads: the last lane of warp 31 overwrites ptr[31] while lane 31 of warp 0 reads it.
template<class OP>
__device__ inline typename OP::RedElTp
scanIncBlock(volatile typename OP::RedElTp* ptr, const unsigned int idx) {
    const unsigned int lane = idx & (WARP - 1);
    const unsigned int warp = idx >> lgWARP;
    typename OP::RedElTp mine = scanIncWarp<OP>(ptr, idx);
    __syncthreads();
    // BEGIN SOLUTION scan-block
    typename OP::RedElTp total = OP::remVolatile(ptr[idx]);
    __syncthreads();
    if (lane == WARP - 1) { ptr[warp] = total; }
    // STUB
    // if (lane == WARP - 1) { ptr[warp] = OP::remVolatile(ptr[idx]); }
    // END SOLUTION
    __syncthreads();
    if (warp == 0) { scanIncWarp<OP>(ptr, idx); }
    __syncthreads();
    if (warp > 0) {
        typename OP::RedElTp before = OP::remVolatile(ptr[warp - 1]);
        mine = OP::apply(before, mine);
    }
    return mine;
}

template<class OP>
__global__ void redNaiveKernel1(typename OP::RedElTp* d_out, typename OP::InpElTp* d_in, const uint32_t N, const uint32_t T) {
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    typename OP::RedElTp a = OP::mapFun(2 * gid < N ? d_in[2 * gid] : OP::identInp());
    typename OP::RedElTp b = OP::mapFun(2 * gid + 1 < N ? d_in[2 * gid + 1] : OP::identInp());
    if (gid < T) { d_out[gid] = OP::apply(a, b); }
}

template<class OP>
__global__ void redNaiveKernel2(typename OP::RedElTp* d_out, const uint32_t offs_inp, const uint32_t offs_out,
                                const uint32_t N, const uint32_t T) {
    const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    typename OP::RedElTp a = 2 * gid < N ? d_out[offs_inp + 2 * gid] : OP::identity();
    typename OP::RedElTp b = 2 * gid + 1 < N ? d_out[offs_inp + 2 * gid + 1] : OP::identity();
    typename OP::RedElTp sum = OP::apply(a, b);
    if (T == 1) {
        if (gid == 0) { d_out[0] = sum; }
    } else if (gid < T) {
        d_out[offs_out + gid] = sum;
    }
}

template<class OP>
__global__ void redAssoc1Block(typename OP::RedElTp* d_inout, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem = (typename OP::RedElTp*)sh_mem;
    shmem[threadIdx.x] = threadIdx.x < N ? d_inout[threadIdx.x] : OP::identity();
    __syncthreads();
    typename OP::RedElTp total = scanIncBlock<OP>(shmem, threadIdx.x);
    if (threadIdx.x + 1 == blockDim.x) { d_inout[0] = total; }
}

template<class OP>
__global__ void redCommuKernel(typename OP::RedElTp* d_tmp, typename OP::InpElTp* d_in, uint32_t N, uint32_t T) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem = (typename OP::RedElTp*)sh_mem;
    typename OP::RedElTp acc = OP::identity();
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += T) {
        typename OP::RedElTp el = OP::mapFun(d_in[i]);
        acc = OP::apply(acc, el);
    }
    shmem[threadIdx.x] = acc;
    __syncthreads();
    acc = scanIncBlock<OP>(shmem, threadIdx.x);
    if (threadIdx.x + 1 == blockDim.x) { d_tmp[blockIdx.x] = acc; }
}

// TASK copy (weekly 2, task 1): coalesced copies. In pass i the block reads (writes) the i-th
// run of blockDim.x consecutive elements; the stub has each thread copy its own CHUNK elements.
template<class T, uint32_t CHUNK>
__device__ inline void
copyFromGlb2ShrMem(const uint32_t glb_offs, const uint32_t N, const T& ne, T* d_inp, volatile T* shmem_inp) {
    for (uint32_t pass = 0; pass < CHUNK; pass++) {
        // BEGIN SOLUTION copy
        const uint32_t local = pass * blockDim.x + threadIdx.x;
        // STUB
        // const uint32_t local = threadIdx.x * CHUNK + pass;
        // END SOLUTION
        shmem_inp[local] = glb_offs + local < N ? d_inp[glb_offs + local] : ne;
    }
    __syncthreads();
}

template<class T, uint32_t CHUNK>
__device__ inline void
copyFromShr2GlbMem(const uint32_t glb_offs, const uint32_t N, T* d_out, volatile T* shmem_red) {
    for (uint32_t pass = 0; pass < CHUNK; pass++) {
        // BEGIN SOLUTION copy
        const uint32_t local = pass * blockDim.x + threadIdx.x;
        // STUB
        // const uint32_t local = threadIdx.x * CHUNK + pass;
        // END SOLUTION
        if (glb_offs + local < N) { d_out[glb_offs + local] = const_cast<const T&>(shmem_red[local]); }
    }
    __syncthreads();
}

template<class OP, int CHUNK>
__global__ void redAssocKernel(typename OP::RedElTp* d_tmp, typename OP::InpElTp* d_in, uint32_t N, uint32_t num_seq_chunks) {
    extern __shared__ char sh_mem[];
    volatile typename OP::InpElTp* shmem_inp = (typename OP::InpElTp*)sh_mem;
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;
    const uint32_t per_iter = CHUNK * blockDim.x;
    const uint32_t first = num_seq_chunks * per_iter * blockIdx.x;
    typename OP::RedElTp block_total = OP::identity();
    for (uint32_t iter = 0; iter < num_seq_chunks; iter++) {
        copyFromGlb2ShrMem<typename OP::InpElTp, CHUNK>(first + iter * per_iter, N, OP::identInp(), d_in, shmem_inp);
        typename OP::RedElTp acc = OP::identity();
        for (uint32_t i = 0; i < CHUNK; i++) {
            const typename OP::InpElTp input = shmem_inp[threadIdx.x * CHUNK + i];
            typename OP::RedElTp el = OP::mapFun(input);
            acc = OP::apply(acc, el);
        }
        __syncthreads();
        shmem_red[threadIdx.x] = acc;
        __syncthreads();
        acc = scanIncBlock<OP>(shmem_red, threadIdx.x);
        if (threadIdx.x + 1 == blockDim.x) { block_total = OP::apply(block_total, acc); }
        __syncthreads();
    }
    if (threadIdx.x + 1 == blockDim.x) { d_tmp[blockIdx.x] = block_total; }
}

template<class OP>
__global__ void scan1Block(typename OP::RedElTp* d_inout, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem = (typename OP::RedElTp*)sh_mem;
    shmem[threadIdx.x] = threadIdx.x < N ? d_inout[threadIdx.x] : OP::identity();
    __syncthreads();
    typename OP::RedElTp prefix = scanIncBlock<OP>(shmem, threadIdx.x);
    if (threadIdx.x < N) { d_inout[threadIdx.x] = prefix; }
}

template<class OP, int CHUNK>
__global__ void scan3rdKernel(typename OP::RedElTp* d_out, typename OP::InpElTp* d_in, typename OP::RedElTp* d_tmp,
                              uint32_t N, uint32_t num_seq_chunks) {
    extern __shared__ char sh_mem[];
    volatile typename OP::InpElTp* shmem_inp = (typename OP::InpElTp*)sh_mem;
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;
    const uint32_t per_iter = CHUNK * blockDim.x;
    const uint32_t first = num_seq_chunks * per_iter * blockIdx.x;
    typename OP::RedElTp carry = blockIdx.x == 0 ? OP::identity() : d_tmp[blockIdx.x - 1];
    typename OP::RedElTp own[CHUNK];
    for (uint32_t iter = 0; iter < num_seq_chunks; iter++) {
        copyFromGlb2ShrMem<typename OP::InpElTp, CHUNK>(first + iter * per_iter, N, OP::identInp(), d_in, shmem_inp);
        typename OP::RedElTp acc = OP::identity();
        for (uint32_t i = 0; i < CHUNK; i++) {
            const typename OP::InpElTp input = shmem_inp[threadIdx.x * CHUNK + i];
            typename OP::RedElTp el = OP::mapFun(input);
            acc = OP::apply(acc, el);
            own[i] = acc;
        }
        __syncthreads();
        shmem_red[threadIdx.x] = acc;
        __syncthreads();
        acc = scanIncBlock<OP>(shmem_red, threadIdx.x);
        __syncthreads();
        shmem_red[threadIdx.x] = acc;
        __syncthreads();
        typename OP::RedElTp before = threadIdx.x == 0 ? OP::identity() : OP::remVolatile(shmem_red[threadIdx.x - 1]);
        typename OP::RedElTp prefix = OP::apply(carry, before);
        typename OP::RedElTp iter_total = OP::remVolatile(shmem_red[blockDim.x - 1]);
        carry = OP::apply(carry, iter_total);
        __syncthreads();
        for (uint32_t i = 0; i < CHUNK; i++) { shmem_red[threadIdx.x * CHUNK + i] = OP::apply(prefix, own[i]); }
        __syncthreads();
        copyFromShr2GlbMem<typename OP::RedElTp, CHUNK>(first + iter * per_iter, N, d_out, shmem_red);
    }
}

// Warp-level segmented scan, synchronized like scanIncWarp.
template<class OP, class F>
__device__ inline ValFlg<typename OP::RedElTp>
sgmScanIncWarp(volatile typename OP::RedElTp* ptr, volatile F* flg, const unsigned int idx) {
    const unsigned int lane = idx & (WARP - 1);
    for (unsigned int step = 1; step < WARP; step <<= 1) {
        typename OP::RedElTp value = OP::remVolatile(ptr[idx]);
        F flag = flg[idx];
        if (lane >= step) {
            if (flag == 0) {
                typename OP::RedElTp before = OP::remVolatile(ptr[idx - step]);
                value = OP::apply(before, value);
            }
            flag = flag | flg[idx - step];
        }
        __syncwarp();
        ptr[idx] = value;
        flg[idx] = flag;
        __syncwarp();
    }
    const F flag = flg[idx];
    return ValFlg<typename OP::RedElTp>(flag, OP::remVolatile(ptr[idx]));
}

template<class OP, class F>
__device__ inline ValFlg<typename OP::RedElTp>
sgmScanIncBlock(volatile typename OP::RedElTp* ptr, volatile F* flg, const unsigned int idx) {
    const unsigned int lane = idx & (WARP - 1);
    const unsigned int warp = idx >> lgWARP;
    ValFlg<typename OP::RedElTp> mine = sgmScanIncWarp<OP, F>(ptr, flg, idx);
    __syncthreads();
    if (lane == WARP - 1) { flg[warp] = mine.f; ptr[warp] = mine.v; }
    __syncthreads();
    if (warp == 0) { sgmScanIncWarp<OP, F>(ptr, flg, idx); }
    __syncthreads();
    if (warp > 0) {
        const F flag = flg[warp - 1];
        ValFlg<typename OP::RedElTp> before(flag, OP::remVolatile(ptr[warp - 1]));
        mine = LiftOP<OP>::apply(before, mine);
    }
    return mine;
}

template<class OP>
__global__ void sgmScan1Block(typename OP::RedElTp* d_vals, char* d_flag, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile typename OP::RedElTp* shmem_vals = (volatile typename OP::RedElTp*)sh_mem;
    volatile char* shmem_flags = (volatile char*)(shmem_vals + blockDim.x);
    shmem_vals[threadIdx.x] = threadIdx.x < N ? d_vals[threadIdx.x] : OP::identity();
    shmem_flags[threadIdx.x] = threadIdx.x < N ? d_flag[threadIdx.x] : 0;
    __syncthreads();
    ValFlg<typename OP::RedElTp> prefix = sgmScanIncBlock<OP, char>(shmem_vals, shmem_flags, threadIdx.x);
    if (threadIdx.x < N) { d_vals[threadIdx.x] = prefix.v; d_flag[threadIdx.x] = prefix.f; }
}

template<class OP, int CHUNK>
__global__ void redSgmScanKernel(char* d_tmp_flag, typename OP::RedElTp* d_tmp_vals, char* d_flag,
                                 typename OP::InpElTp* d_in, uint32_t N, uint32_t num_seq_chunks) {
    typedef ValFlg<typename OP::RedElTp> Pair;
    extern __shared__ char sh_mem[];
    volatile typename OP::InpElTp* shmem_inp = (typename OP::InpElTp*)sh_mem;
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;
    const uint32_t per_iter = CHUNK * blockDim.x;
    const uint32_t first = num_seq_chunks * per_iter * blockIdx.x;
    Pair block_total = LiftOP<OP>::identity();
    for (uint32_t iter = 0; iter < num_seq_chunks; iter++) {
        volatile char* shmem_flg = (volatile char*)(shmem_inp + per_iter);
        copyFromGlb2ShrMem<typename OP::InpElTp, CHUNK>(first + iter * per_iter, N, OP::identInp(), d_in, shmem_inp);
        copyFromGlb2ShrMem<char, CHUNK>(first + iter * per_iter, N, 0, d_flag, shmem_flg);
        Pair acc = LiftOP<OP>::identity();
        for (uint32_t i = 0; i < CHUNK; i++) {
            const char flag = shmem_flg[threadIdx.x * CHUNK + i];
            const typename OP::InpElTp input = shmem_inp[threadIdx.x * CHUNK + i];
            acc = LiftOP<OP>::apply(acc, Pair(flag, OP::mapFun(input)));
        }
        __syncthreads();
        shmem_flg = (volatile char*)(shmem_red + blockDim.x);
        shmem_red[threadIdx.x] = acc.v;
        shmem_flg[threadIdx.x] = acc.f;
        __syncthreads();
        acc = sgmScanIncBlock<OP, char>(shmem_red, shmem_flg, threadIdx.x);
        if (threadIdx.x + 1 == blockDim.x) { block_total = LiftOP<OP>::apply(block_total, acc); }
        __syncthreads();
    }
    if (threadIdx.x + 1 == blockDim.x) { d_tmp_flag[blockIdx.x] = block_total.f; d_tmp_vals[blockIdx.x] = block_total.v; }
}

template<class OP, int CHUNK>
__global__ void sgmScan3rdKernel(typename OP::RedElTp* d_out, typename OP::InpElTp* d_inp, char* d_flg,
                                 typename OP::RedElTp* d_tmp_vals, char* d_tmp_flag, uint32_t N, uint32_t num_seq_chunks) {
    typedef ValFlg<typename OP::RedElTp> Pair;
    extern __shared__ char sh_mem[];
    volatile typename OP::InpElTp* shmem_inp = (typename OP::InpElTp*)sh_mem;
    volatile typename OP::RedElTp* shmem_red = (typename OP::RedElTp*)sh_mem;
    const uint32_t per_iter = CHUNK * blockDim.x;
    const uint32_t first = num_seq_chunks * per_iter * blockIdx.x;
    Pair carry = blockIdx.x == 0 ? LiftOP<OP>::identity() : Pair(d_tmp_flag[blockIdx.x - 1], d_tmp_vals[blockIdx.x - 1]);
    Pair own[CHUNK];
    for (uint32_t iter = 0; iter < num_seq_chunks; iter++) {
        volatile char* shmem_flg = (volatile char*)(shmem_inp + per_iter);
        copyFromGlb2ShrMem<typename OP::InpElTp, CHUNK>(first + iter * per_iter, N, OP::identInp(), d_inp, shmem_inp);
        copyFromGlb2ShrMem<char, CHUNK>(first + iter * per_iter, N, 0, d_flg, shmem_flg);
        Pair acc = LiftOP<OP>::identity();
        for (uint32_t i = 0; i < CHUNK; i++) {
            const char flag = shmem_flg[threadIdx.x * CHUNK + i];
            const typename OP::InpElTp input = shmem_inp[threadIdx.x * CHUNK + i];
            acc = LiftOP<OP>::apply(acc, Pair(flag, OP::mapFun(input)));
            own[i] = acc;
        }
        __syncthreads();
        shmem_flg = (volatile char*)(shmem_red + blockDim.x);
        shmem_red[threadIdx.x] = acc.v;
        shmem_flg[threadIdx.x] = acc.f;
        __syncthreads();
        acc = sgmScanIncBlock<OP, char>(shmem_red, shmem_flg, threadIdx.x);
        __syncthreads();
        shmem_red[threadIdx.x] = acc.v;
        shmem_flg[threadIdx.x] = acc.f;
        __syncthreads();
        const char before_flag = threadIdx.x == 0 ? 0 : shmem_flg[threadIdx.x - 1];
        Pair before = threadIdx.x == 0 ? LiftOP<OP>::identity()
                                       : Pair(before_flag, OP::remVolatile(shmem_red[threadIdx.x - 1]));
        Pair prefix = LiftOP<OP>::apply(carry, before);
        const char last_flag = shmem_flg[blockDim.x - 1];
        carry = LiftOP<OP>::apply(carry, Pair(last_flag, OP::remVolatile(shmem_red[blockDim.x - 1])));
        __syncthreads();
        for (uint32_t i = 0; i < CHUNK; i++) { shmem_red[threadIdx.x * CHUNK + i] = LiftOP<OP>::apply(prefix, own[i]).v; }
        __syncthreads();
        copyFromShr2GlbMem<typename OP::RedElTp, CHUNK>(first + iter * per_iter, N, d_out, shmem_red);
    }
}

#endif
