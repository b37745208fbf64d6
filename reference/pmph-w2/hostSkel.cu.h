// kernellab's compat fixture of the PMPH course's host file, 2020-2023 shape: helpers defined in
// the header without `inline`, and host wrappers that give every chunked launch ELEMS_PER_THREAD
// words of shared memory per thread without opting in to more than the default.
#ifndef PMPH_COMPAT_HOST
#define PMPH_COMPAT_HOST

#include "constants.cu.h"
#include "pbbKernels.cu.h"

int gpuAssert(cudaError_t code) {
    if (code == cudaSuccess) { return 0; }
    printf("GPU Error: %s\n", cudaGetErrorString(code));
    return -1;
}

uint32_t closestMul32(uint32_t x) {
    return (x + WARP - 1) / WARP * WARP;
}

void log2UB(uint32_t n, uint32_t* ub, uint32_t* lg) {
    if (n == 0) { printf("log2UB: n must be positive\n"); exit(1); }
    *ub = 1;
    *lg = 0;
    while (*ub < n) { *ub *= 2; *lg += 1; }
}

// At most MAX_BLOCK blocks; each thread handles `*num_chunks` chunks of CHUNK elements.
template<int CHUNK>
uint32_t getNumBlocks(const uint32_t N, const uint32_t B, uint32_t* num_chunks) {
    const uint64_t most = uint64_t(MAX_BLOCK) * B;
    const uint64_t threads = MAX_HWDTH < most ? MAX_HWDTH : most;
    const uint64_t wanted = (uint64_t(N) + CHUNK - 1) / CHUNK;
    *num_chunks = uint32_t((wanted + threads - 1) / threads);
    if (*num_chunks == 0) { *num_chunks = 1; }
    const uint64_t per_thread = uint64_t(*num_chunks) * CHUNK;
    const uint64_t used = (N + per_thread - 1) / per_thread;
    return uint32_t((used + B - 1) / B);
}

template<class OP>
void mapredNaive(const uint32_t B, const uint32_t N, typename OP::RedElTp* d_out, typename OP::InpElTp* d_in) {
    uint32_t Q, K;
    log2UB(N, &Q, &K);
    uint32_t T = Q / 2;
    redNaiveKernel1<OP><<<(T + B - 1) / B, B>>>(d_out, d_in, N, T);
    uint32_t offs_inp = 0, offs_out = Q / 2;
    for (uint32_t level = 2; level <= K; level++) {
        T = Q >> level;
        redNaiveKernel2<OP><<<(T + B - 1) / B, B>>>(d_out, offs_inp, offs_out, 2 * T, T);
        const uint32_t swapped = offs_inp;
        offs_inp = offs_out;
        offs_out = swapped;
    }
}

template<class OP>
void mapReduce(const uint32_t B, const uint32_t N, typename OP::RedElTp* d_out, typename OP::InpElTp* d_in) {
    const uint32_t CHUNK = ELEMS_PER_THREAD * 4 / sizeof(typename OP::InpElTp);
    uint32_t num_blocks;
    if (OP::commutative) {
        num_blocks = min(MAX_BLOCK, (min(MAX_HWDTH, N) + B - 1) / B);
        redCommuKernel<OP><<<num_blocks, B, B * sizeof(typename OP::RedElTp)>>>(d_out, d_in, N, num_blocks * B);
    } else {
        uint32_t num_seq_chunks;
        num_blocks = getNumBlocks<CHUNK>(N, B, &num_seq_chunks);
        const size_t shmem = B * max(sizeof(typename OP::InpElTp) * CHUNK, sizeof(typename OP::RedElTp));
        redAssocKernel<OP, CHUNK><<<num_blocks, B, shmem>>>(d_out, d_in, N, num_seq_chunks);
    }
    const uint32_t block = closestMul32(num_blocks);
    redAssoc1Block<OP><<<1, block, block * sizeof(typename OP::RedElTp)>>>(d_out, num_blocks);
}

template<class OP>
void scanInc(const uint32_t B, const size_t N, typename OP::RedElTp* d_out, typename OP::InpElTp* d_in,
             typename OP::RedElTp* d_tmp) {
    const uint32_t inp_bytes = sizeof(typename OP::InpElTp), red_bytes = sizeof(typename OP::RedElTp);
    const uint32_t elem = inp_bytes > red_bytes ? inp_bytes : red_bytes;
    const uint32_t CHUNK = ELEMS_PER_THREAD * 4 / elem;
    uint32_t num_seq_chunks;
    const uint32_t num_blocks = getNumBlocks<CHUNK>(N, B, &num_seq_chunks);
    const size_t shmem = B * elem * CHUNK;
    redAssocKernel<OP, CHUNK><<<num_blocks, B, shmem>>>(d_tmp, d_in, N, num_seq_chunks);
    const uint32_t block = closestMul32(num_blocks);
    scan1Block<OP><<<1, block, block * sizeof(typename OP::RedElTp)>>>(d_tmp, num_blocks);
    scan3rdKernel<OP, CHUNK><<<num_blocks, B, shmem>>>(d_out, d_in, d_tmp, N, num_seq_chunks);
}

template<class OP>
void sgmScanInc(const uint32_t B, const size_t N, typename OP::RedElTp* d_out, char* d_flags, typename OP::InpElTp* d_inp,
                typename OP::RedElTp* d_tmp_vals, char* d_tmp_flags) {
    const uint32_t inp_bytes = sizeof(typename OP::InpElTp) + 1, red_bytes = sizeof(typename OP::RedElTp);
    const uint32_t elem = inp_bytes > red_bytes ? inp_bytes : red_bytes;
    const uint32_t CHUNK = ELEMS_PER_THREAD * 4 / elem;
    uint32_t num_seq_chunks;
    const uint32_t num_blocks = getNumBlocks<CHUNK>(N, B, &num_seq_chunks);
    const size_t shmem = B * max(size_t(elem) * CHUNK, sizeof(typename OP::RedElTp) + 1);
    redSgmScanKernel<OP, CHUNK><<<num_blocks, B, shmem>>>(d_tmp_flags, d_tmp_vals, d_flags, d_inp, N, num_seq_chunks);
    const uint32_t block = closestMul32(num_blocks);
    sgmScan1Block<OP><<<1, block, block * (sizeof(typename OP::RedElTp) + 1)>>>(d_tmp_vals, d_tmp_flags, num_blocks);
    sgmScan3rdKernel<OP, CHUNK><<<num_blocks, B, shmem>>>(d_out, d_inp, d_flags, d_tmp_vals, d_tmp_flags, N, num_seq_chunks);
}

#endif
