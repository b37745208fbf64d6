// Task copy: copyFromGlb2ShrMem and copyFromShr2GlbMem, each on its own. The other direction
// of each test uses a fixed, known mapping, so a bug is pinned on the function under test.
#include "pbb_testing.cuh"

using kernellab::DeviceBuffer;

namespace {

/** Copies tiles in with the student's function, then out again thread by thread. */
template<class T, uint32_t CHUNK>
__global__ void glb2ShrKernel(T* d_out, T* d_in, uint32_t N, T ne, T poison) {
    extern __shared__ char sh_mem[];
    volatile T* tile = (T*)sh_mem;
    const uint32_t offs = blockIdx.x * blockDim.x * CHUNK;
    for (uint32_t i = 0; i < CHUNK; i++) { tile[threadIdx.x * CHUNK + i] = poison; }
    __syncthreads();
    copyFromGlb2ShrMem<T, CHUNK>(offs, N, ne, d_in, tile);
    for (uint32_t i = 0; i < CHUNK; i++) {
        d_out[offs + threadIdx.x * CHUNK + i] = const_cast<const T&>(tile[threadIdx.x * CHUNK + i]);
    }
}

/** Fills tiles thread by thread, then copies them out with the student's function. */
template<class T, uint32_t CHUNK>
__global__ void shr2GlbKernel(T* d_out, T* d_in, uint32_t N) {
    extern __shared__ char sh_mem[];
    volatile T* tile = (T*)sh_mem;
    const uint32_t offs = blockIdx.x * blockDim.x * CHUNK;
    for (uint32_t i = 0; i < CHUNK; i++) {
        const uint32_t loc = threadIdx.x * CHUNK + i;
        if (offs + loc < N) { tile[loc] = d_in[offs + loc]; }
    }
    __syncthreads();
    copyFromShr2GlbMem<T, CHUNK>(offs, N, d_out, tile);
}

template<class T> std::vector<T> copyInputs(size_t n, uint64_t seed);
template<> std::vector<int> copyInputs<int>(size_t n, uint64_t seed) {
    return kernellab::randomInts(n, seed, -1000000, 1000000);
}
template<> std::vector<char> copyInputs<char>(size_t n, uint64_t seed) {
    const auto ints = kernellab::randomInts(n, seed, 1, 100);
    return std::vector<char>(ints.begin(), ints.end());
}
template<> std::vector<MyInt4> copyInputs<MyInt4>(size_t n, uint64_t seed) {
    const auto ints = kernellab::randomInts(4 * n, seed, -1000, 1000);
    std::vector<MyInt4> values;
    for (size_t i = 0; i < n; i++) { values.emplace_back(ints[4 * i], ints[4 * i + 1], ints[4 * i + 2], ints[4 * i + 3]); }
    return values;
}

template<class T> T neutral();
template<> int neutral<int>() { return -7; }
template<> char neutral<char>() { return 0; }
template<> MyInt4 neutral<MyInt4>() { return MyInt4(-1, -2, -3, -4); }

/** Lets a test kernel use more than the default 48 KB of shared memory (1024 threads x 23 ints). */
template<class Kernel>
void allowTestShmem(Kernel* kernel, size_t bytes) {
    KL_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

struct BytesEqual {
    template<class T>
    bool operator()(const T& a, const T& b) const { return std::memcmp(&a, &b, sizeof(T)) == 0; }
};

template<class T, uint32_t CHUNK>
void checkGlb2Shr(uint32_t n, uint32_t block, uint64_t seed) {
    const uint32_t per_thread = CHUNK;
    const size_t element_bytes = sizeof(T);
    KL_CAPTURE(per_thread, element_bytes);
    const auto input = copyInputs<T>(n, seed);
    const uint32_t blocks = pbb::blocksFor(n, block, CHUNK);
    const size_t padded = size_t(blocks) * block * CHUNK;
    DeviceBuffer<T> d_in(input), d_out(padded);
    const size_t shmem = size_t(block) * CHUNK * sizeof(T);
    allowTestShmem(glb2ShrKernel<T, CHUNK>, shmem);
    glb2ShrKernel<T, CHUNK><<<blocks, block, shmem>>>(d_out.data(), d_in.data(), n, neutral<T>(),
                                                     kernellab::poisonValue<T>());
    KL_CHECK_LAUNCH();

    const auto expected = [&] {
        std::vector<T> tiles(padded, neutral<T>());
        std::copy(input.begin(), input.end(), tiles.begin());
        return tiles;
    };
    KL_REQUIRE_EQUAL(d_out.download(), expected(), BytesEqual{},
                     (kernellab::Layout{block, uint64_t(block) * CHUNK, CHUNK}));
}

template<class T, uint32_t CHUNK>
void checkShr2Glb(uint32_t n, uint32_t block, uint64_t seed) {
    const uint32_t per_thread = CHUNK;
    const size_t element_bytes = sizeof(T);
    KL_CAPTURE(per_thread, element_bytes);
    const auto input = copyInputs<T>(n, seed);
    const uint32_t blocks = pbb::blocksFor(n, block, CHUNK);
    const size_t padded = size_t(blocks) * block * CHUNK;
    DeviceBuffer<T> d_in(input), d_out(padded);
    const size_t shmem = size_t(block) * CHUNK * sizeof(T);
    allowTestShmem(shr2GlbKernel<T, CHUNK>, shmem);
    shr2GlbKernel<T, CHUNK><<<blocks, block, shmem>>>(d_out.data(), d_in.data(), n);
    KL_CHECK_LAUNCH();

    // Past N the output must keep its poison: the copy may not write outside the array.
    const auto expected = [&] {
        std::vector<T> tiles(padded, kernellab::poisonValue<T>());
        std::copy(input.begin(), input.end(), tiles.begin());
        return tiles;
    };
    KL_REQUIRE_EQUAL(d_out.download(), expected(), BytesEqual{},
                     (kernellab::Layout{block, uint64_t(block) * CHUNK, CHUNK}));
}

}  // namespace

TEST_CASE("copyFromGlb2ShrMem copies each tile in order and pads past N with the neutral element", "[copy]") {
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    const uint64_t seed  = 1000 + n;
    KL_CAPTURE(n, block, seed);
    SECTION("int, 1 per thread")     { checkGlb2Shr<int, 1>(n, block, seed); }
    SECTION("int, 7 per thread")     { checkGlb2Shr<int, 7>(n, block, seed); }
    SECTION("int, 23 per thread")    { checkGlb2Shr<int, 23>(n, block, seed); }
    SECTION("char, 9 per thread")    { checkGlb2Shr<char, 9>(n, block, seed); }
    SECTION("MyInt4, 3 per thread")  { checkGlb2Shr<MyInt4, 3>(n, block, seed); }
}

TEST_CASE("copyFromShr2GlbMem writes each tile in order and nothing past N", "[copy]") {
    const auto size_and_block = GENERATE(from_range(kernellab::sizeAndBlockCases()));
    const uint32_t n     = size_and_block.n;
    const uint32_t block = size_and_block.block;
    const uint64_t seed  = 2000 + n;
    KL_CAPTURE(n, block, seed);
    SECTION("int, 1 per thread")     { checkShr2Glb<int, 1>(n, block, seed); }
    SECTION("int, 7 per thread")     { checkShr2Glb<int, 7>(n, block, seed); }
    SECTION("int, 23 per thread")    { checkShr2Glb<int, 23>(n, block, seed); }
    SECTION("char, 9 per thread")    { checkShr2Glb<char, 9>(n, block, seed); }
    SECTION("MyInt4, 3 per thread")  { checkShr2Glb<MyInt4, 3>(n, block, seed); }
}

// Graded on what the task teaches: coalescing, measured by counting (issue 15).
#include "copy_properties.cuh"
