// The CPU backend's own tests: for every check, a correct kernel that passes it and a broken
// one that must be reported with the right kind of finding and the right line. A line is
// found by the marker comment on it (`// site: NAME`), so the tests survive edits above it.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "kernellab/catch.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/inputs.hpp"
#include "kernellab/lockstep.hpp"
#include "kernellab_cpu/finding.hpp"

using kernellab::DeviceBuffer;
using kernellab::cpu::Finding;
using kernellab::cpu::FindingKind;

namespace {

/** The line of this file that carries the comment `// site: <name>`. */
int lineOf(const std::string& name) {
    std::ifstream source(__FILE__);
    std::string text;
    for (int line = 1; std::getline(source, text); line++) {
        if (text.find("// site: " + name) != std::string::npos && text.find("lineOf") == std::string::npos) {
            return line;
        }
    }
    FAIL("no line marked 'site: " << name << "' in " << __FILE__);
    return 0;
}

/** Runs `launch`, which must be reported as `kind` at the line marked `site`. */
template<class Launch>
void requireFinding(Launch&& launch, FindingKind kind, const std::string& site) {
    try {
        launch();
    } catch (const Finding& finding) {
        CAPTURE(finding.what());
        CHECK(std::string(kernellab::cpu::findingName(finding.kind)) == kernellab::cpu::findingName(kind));
        CHECK(finding.file == __FILE__);
        CHECK(finding.line == lineOf(site));
        return;
    }
    FAIL("not reported: a " << kernellab::cpu::findingName(kind) << " at the line marked " << site);
}

// ---- races between warps: a missing __syncthreads ------------------------------------------

/** Each thread reads the element its right neighbour wrote; `synced` puts a barrier between. */
template<bool synced>
__global__ void rotateBlock(int* out, const int* in) {
    __shared__ int tile[256];
    tile[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    if (synced) { __syncthreads(); }
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

TEST_CASE("A missing __syncthreads is reported as a race at the launch", "[race]") {
    const auto input = kernellab::randomInts(4 * 256, 7, -1000, 1000);
    DeviceBuffer<int> d_in(input), d_out(input.size());
    SECTION("with the barrier, the rotation is right") {
        rotateBlock<true><<<4, 256>>>(d_out.data(), d_in.data());
        KL_CHECK_LAUNCH();
        const auto out = d_out.download();
        for (uint32_t i = 0; i < out.size(); i++) { REQUIRE(out[i] == input[i / 256 * 256 + (i + 1) % 256]); }
    }
    SECTION("without it, a race") {
        requireFinding([&] { rotateBlock<false><<<4, 256>>>(d_out.data(), d_in.data()); },  // site: rotate-launch
                       FindingKind::Race, "rotate-launch");
    }
}

TEST_CASE("A race leaves the launch's outputs poisoned, not the first order's result", "[race]") {
    const auto input = kernellab::randomInts(4 * 256, 7, -1000, 1000);
    // Zeros, not the allocation's poison: only a poisoning after the race makes them 0xCD bytes.
    DeviceBuffer<int> d_in(input), d_out(std::vector<int>(input.size(), 0));
    requireFinding([&] { rotateBlock<false><<<4, 256>>>(d_out.data(), d_in.data()); },  // site: poisoned-launch
                   FindingKind::Race, "poisoned-launch");
    int poison;
    std::memset(&poison, 0xCD, sizeof poison);
    const auto out = d_out.download();
    CHECK(std::count(out.begin(), out.end(), poison) == std::ptrdiff_t(out.size()));
    // The input the launch only read keeps its values.
    CHECK(d_in.download() == input);
}

// ---- warp-synchronous code without __syncwarp ----------------------------------------------

/** The pre-Volta warp scan: `volatile` shared memory and, unless `synced`, no __syncwarp. */
template<bool synced>
__global__ void warpScan(int* out, const int* in) {
    extern __shared__ int shared[];
    volatile int* values = shared;
    const unsigned lane = threadIdx.x % 32;
    values[threadIdx.x] = in[threadIdx.x];
    if (synced) { __syncwarp(); }
    for (unsigned step = 1; step < 32; step *= 2) {
        const int left = lane >= step ? values[threadIdx.x - step] : 0;
        if (synced) { __syncwarp(); }
        values[threadIdx.x] += left;
        if (synced) { __syncwarp(); }
    }
    out[threadIdx.x] = values[threadIdx.x];
}

TEST_CASE("Warp-synchronous code without __syncwarp is its own finding", "[warp-synchronous]") {
    const auto input = kernellab::randomInts(128, 11, -50, 50);
    DeviceBuffer<int> d_in(input), d_out(input.size());
    SECTION("with __syncwarp, each warp's scan is right") {
        warpScan<true><<<1, 128, 128 * sizeof(int)>>>(d_out.data(), d_in.data());
        KL_CHECK_LAUNCH();
        const auto out = d_out.download();
        for (uint32_t i = 0; i < out.size(); i++) {
            REQUIRE(out[i] == std::accumulate(input.begin() + i / 32 * 32, input.begin() + i + 1, 0));
        }
    }
    SECTION("without it, a warp-synchronous race") {
        requireFinding([&] { warpScan<false><<<1, 128, 128 * sizeof(int)>>>(d_out.data(), d_in.data()); },  // site: scan-launch
                       FindingKind::WarpSynchronousRace, "scan-launch");
    }
}

/** An operator of the course's shape, for the tests' Stepped<OP> (kernellab/lockstep.hpp). */
struct Plus {
    static __device__ int apply(const int a, const int b) { return a + b; }
};

/** The course's in-place warp scan without __syncwarp, applying Stepped<Plus> as the tests do. */
__global__ void steppedWarpScan(int* out, const int* in) {
    extern __shared__ int shared[];
    volatile int* values = shared;
    const unsigned lane = threadIdx.x % 32;
    values[threadIdx.x] = in[threadIdx.x];
    for (unsigned step = 1; step < 32; step *= 2) {
        if (lane >= step) {
            values[threadIdx.x] = kernellab::Stepped<Plus>::apply(values[threadIdx.x - step], values[threadIdx.x]);
        }
    }
    out[threadIdx.x] = values[threadIdx.x];
}

/**
 * The course's segmented warp scan without __syncwarp: a lane whose window holds no segment start
 * adds its left neighbour's value, then every lane ORs its neighbour's flag into its own. In
 * lockstep each lane reads the neighbour's flag before the neighbour updates it, though no
 * operator is applied between the two.
 */
__global__ void steppedSegmentedWarpScan(int* out, const int* in, const char* starts) {
    extern __shared__ int shared[];
    volatile int* values = shared;
    volatile char* flags = reinterpret_cast<volatile char*>(shared + blockDim.x);
    const unsigned lane = threadIdx.x % 32;
    values[threadIdx.x] = in[threadIdx.x];
    flags[threadIdx.x] = starts[threadIdx.x];
    for (unsigned step = 1; step < 32; step *= 2) {
        if (lane >= step) {
            if (flags[threadIdx.x] == 0) {
                values[threadIdx.x] = kernellab::Stepped<Plus>::apply(values[threadIdx.x - step], values[threadIdx.x]);
            }
            flags[threadIdx.x] = flags[threadIdx.x - step] | flags[threadIdx.x];
        }
    }
    out[threadIdx.x] = values[threadIdx.x];
}

/** Each warp's inclusive scan of `input`, restarting where `starts` is 1. */
std::vector<int> warpScans(const std::vector<int>& input, const std::vector<char>& starts) {
    std::vector<int> scanned(input.size());
    for (size_t i = 0; i < input.size(); i++) {
        scanned[i] = input[i] + (i % 32 == 0 || starts[i] != 0 ? 0 : scanned[i - 1]);
    }
    return scanned;
}

TEST_CASE("Under the warn policy, lanes kept in step at each application compute the lockstep result", "[.warn]") {
    // Run with KERNELLAB_WARP_SYNCHRONOUS=warn: a warning, the right scans, exit status 0.
    const auto input = kernellab::randomInts(64, 12, -50, 50);
    DeviceBuffer<int> d_in(input), d_out(input.size());
    SECTION("the warp scan") {
        steppedWarpScan<<<1, 64, 64 * sizeof(int)>>>(d_out.data(), d_in.data());
        KL_CHECK_LAUNCH();
        CHECK(d_out.download() == warpScans(input, std::vector<char>(input.size(), 0)));
    }
    SECTION("the segmented warp scan, segments of mean length 1 to 40") {
        const unsigned mean_segment = GENERATE(1u, 3u, 9u, 40u);
        CAPTURE(mean_segment);
        std::vector<char> starts(input.size());
        const auto draws = kernellab::randomInts(input.size(), 13 + mean_segment, 0, int(mean_segment) - 1);
        for (size_t i = 0; i < starts.size(); i++) { starts[i] = draws[i] == 0; }
        DeviceBuffer<char> d_starts(starts);
        steppedSegmentedWarpScan<<<1, 64, 64 * (sizeof(int) + 1)>>>(d_out.data(), d_in.data(), d_starts.data());
        KL_CHECK_LAUNCH();
        CHECK(d_out.download() == warpScans(input, starts));
    }
}

TEST_CASE("Under the warn policy, a failure beside the warning leaves the verdict to a GPU", "[.warn-unstepped]") {
    // Run with KERNELLAB_WARP_SYNCHRONOUS=warn: lanes that never take turns read values that other
    // lanes have overwritten; the check fails, and the exit status is 77.
    const auto input = kernellab::randomInts(64, 12, -50, 50);
    DeviceBuffer<int> d_in(input), d_out(input.size());
    warpScan<false><<<1, 64, 64 * sizeof(int)>>>(d_out.data(), d_in.data());
    KL_CHECK_LAUNCH();
    CHECK(d_out.download() == warpScans(input, std::vector<char>(input.size(), 0)));
}

// ---- barrier divergence and deadlock ---------------------------------------------------------

__global__ void barriersAtTwoSites(int* out) {
    if (threadIdx.x < 32) {
        __syncthreads();  // site: first-barrier
    } else {
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}

__global__ void barrierAfterReturn(int* out, unsigned n) {
    if (threadIdx.x >= n) { return; }
    __syncthreads();  // site: barrier-after-return
    out[threadIdx.x] = 1;
}

__global__ void warpWaitsForBarrier(int* out) {
    if (threadIdx.x == 0) {
        __syncthreads();
    } else {
        __syncwarp();  // site: warp-waits
    }
    out[threadIdx.x] = 1;
}

TEST_CASE("Barrier divergence and deadlocks name their sites", "[barrier]") {
    DeviceBuffer<int> d_out(64);
    SECTION("every thread at one barrier is fine") {
        barrierAfterReturn<<<1, 64>>>(d_out.data(), 64);
        KL_CHECK_LAUNCH();
    }
    SECTION("threads at two different __syncthreads") {
        requireFinding([&] { barriersAtTwoSites<<<1, 64>>>(d_out.data()); }, FindingKind::BarrierDivergence,
                       "first-barrier");
    }
    SECTION("a barrier after some threads returned") {
        requireFinding([&] { barrierAfterReturn<<<1, 64>>>(d_out.data(), 40); }, FindingKind::BarrierDivergence,
                       "barrier-after-return");
    }
    SECTION("a warp barrier waiting for a lane held at a block barrier") {
        requireFinding([&] { warpWaitsForBarrier<<<1, 32>>>(d_out.data()); }, FindingKind::Deadlock, "warp-waits");
    }
}

// ---- warp collectives ---------------------------------------------------------------------------

__global__ void collectives(int* out) {
    const unsigned lane = threadIdx.x % 32;
    const int value = int(lane * 10 + 1);
    int* mine = out + threadIdx.x * 8;
    mine[0] = __shfl_sync(0xffffffffu, value, 27);
    mine[1] = __shfl_up_sync(0xffffffffu, value, 3);
    mine[2] = __shfl_down_sync(0xffffffffu, value, 5);
    mine[3] = __shfl_xor_sync(0xffffffffu, value, 1);
    mine[4] = int(__ballot_sync(0xffffffffu, lane % 3 == 0));
    mine[5] = __all_sync(0xffffffffu, lane < 32) + 2 * __any_sync(0xffffffffu, lane == 31);
    mine[6] = __syncthreads_count(lane % 2 == 0);
    mine[7] = __shfl_sync(0xffffffffu, value, 7, 16);  // lane 7 of each half
}

__global__ void readsNonParticipant(int* out) {
    if (threadIdx.x < 16) {
        out[threadIdx.x] = __shfl_sync(0x0000ffffu, int(threadIdx.x), 27);  // site: reads-lane-27
    }
}

__global__ void maskWithoutSelf(int* out) {
    out[threadIdx.x] = __shfl_sync(0xfffffffeu, int(threadIdx.x), 1);  // site: mask-without-self
}

__global__ void differentMasks(int* out) {
    const unsigned mask = threadIdx.x == 5 ? 0x0000ffffu : 0xffffffffu;
    out[threadIdx.x] = int(__ballot_sync(mask, 1));  // site: different-masks
}

TEST_CASE("Warp collectives give CUDA's results and catch misuse", "[collectives]") {
    DeviceBuffer<int> d_out(64 * 8);
    SECTION("shuffles, votes and __syncthreads_count") {
        collectives<<<1, 64>>>(d_out.data());
        KL_CHECK_LAUNCH();
        const auto out = d_out.download();
        for (unsigned t = 0; t < 64; t++) {
            const int lane = int(t % 32);
            CAPTURE(t);
            CHECK(out[t * 8 + 0] == 271);
            CHECK(out[t * 8 + 1] == (lane >= 3 ? (lane - 3) * 10 + 1 : lane * 10 + 1));
            CHECK(out[t * 8 + 2] == (lane + 5 < 32 ? (lane + 5) * 10 + 1 : lane * 10 + 1));
            CHECK(out[t * 8 + 3] == (lane ^ 1) * 10 + 1);
            CHECK(unsigned(out[t * 8 + 4]) == 0x49249249u);
            CHECK(out[t * 8 + 5] == 3);
            CHECK(out[t * 8 + 6] == 32);
            CHECK(out[t * 8 + 7] == (lane / 16 * 16 + 7) * 10 + 1);
        }
    }
    SECTION("reading a lane outside the mask") {
        requireFinding([&] { readsNonParticipant<<<1, 32>>>(d_out.data()); }, FindingKind::CollectiveMisuse,
                       "reads-lane-27");
    }
    SECTION("a mask that leaves out the calling lane") {
        requireFinding([&] { maskWithoutSelf<<<1, 32>>>(d_out.data()); }, FindingKind::CollectiveMisuse,
                       "mask-without-self");
    }
    SECTION("lanes of one mask with different masks") {
        requireFinding([&] { differentMasks<<<1, 32>>>(d_out.data()); }, FindingKind::CollectiveMisuse,
                       "different-masks");
    }
}

// ---- what the kernels may use -------------------------------------------------------------

/** Static shared memory in a templated device function, a 2-D shared array, atomics across blocks. */
template<class T, int N>
__device__ T sumThroughShared(T value) {
    __shared__ T partial[N];
    partial[threadIdx.x] = value;
    __syncthreads();
    T total = 0;
    for (int i = 0; i < N; i++) { total += partial[i]; }
    __syncthreads();
    return total;
}

__global__ void sharedAndAtomics(int* ints, unsigned long long* wide, float* floats, double* doubles) {
    __shared__ int grid2d[4][64];
    grid2d[threadIdx.x % 4][threadIdx.x] = int(threadIdx.x);
    __syncthreads();
    const int total = sumThroughShared<int, 64>(grid2d[threadIdx.x % 4][threadIdx.x]);
    const double half = sumThroughShared<double, 64>(0.5);
    atomicAdd(ints, total);
    atomicMax(ints + 1, int(blockIdx.x * 64 + threadIdx.x));
    atomicAdd(wide, 1ull);
    atomicAdd(floats, 0.25f);
    atomicAdd(doubles, half);
}

TEST_CASE("Shared memory and atomics behave as on the GPU", "[runtime]") {
    DeviceBuffer<int> d_ints(2);
    DeviceBuffer<unsigned long long> d_wide(1);
    DeviceBuffer<float> d_floats(1);
    DeviceBuffer<double> d_doubles(1);
    KL_CUDA(cudaMemset(d_ints.data(), 0, 2 * sizeof(int)));
    KL_CUDA(cudaMemset(d_wide.data(), 0, sizeof(unsigned long long)));
    KL_CUDA(cudaMemset(d_floats.data(), 0, sizeof(float)));
    KL_CUDA(cudaMemset(d_doubles.data(), 0, sizeof(double)));
    sharedAndAtomics<<<8, 64>>>(d_ints.data(), d_wide.data(), d_floats.data(), d_doubles.data());
    KL_CHECK_LAUNCH();
    CHECK(d_ints.download() == std::vector<int>{8 * 64 * 2016, 8 * 64 - 1});
    CHECK(d_wide.download()[0] == 8 * 64);
    CHECK(d_floats.download()[0] == 8 * 64 * 0.25f);
    CHECK(d_doubles.download()[0] == 8 * 64 * 32.0);
}

/** Each thread writes its own threadIdx at its linear index within the block. */
__global__ void threadIndices(uint3* out) {
    const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    out[blockIdx.x * blockDim.x * blockDim.y * blockDim.z + linear] = threadIdx;
}

TEST_CASE("Threads of a three-dimensional block get CUDA's threadIdx", "[runtime]") {
    const dim3 block(5, 3, 2);
    DeviceBuffer<uint3> d_out(2 * 30);
    threadIndices<<<2, block>>>(d_out.data());
    KL_CHECK_LAUNCH();
    const auto out = d_out.download();
    for (unsigned i = 0; i < out.size(); i++) {
        const unsigned linear = i % 30;
        CAPTURE(i);
        CHECK(out[i].x == linear % 5);
        CHECK(out[i].y == linear / 5 % 3);
        CHECK(out[i].z == linear / 15);
    }
}

TEST_CASE("Work on a non-blocking stream is done when the stream is synchronized", "[runtime]") {
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    DeviceBuffer<uint3> d_out(30);
    threadIndices<<<1, dim3(5, 3, 2), 0, stream>>>(d_out.data());
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(d_out.download()[29].z == 1);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    cudaStream_t unused = nullptr;
    CHECK(cudaStreamCreateWithFlags(&unused, 0x8) == cudaErrorInvalidValue);
}

// ---- out-of-bounds accesses (the AddressSanitizer flavour, KERNELLAB_CPU_SANITIZE=address) ----

__global__ void writesPastTheEnd(int* out) {
    out[threadIdx.x] = 1;  // site: global-overrun
}

__global__ void sharedPastTheEnd(int* out) {
    __shared__ int tile[32];
    tile[threadIdx.x] = int(threadIdx.x);  // site: shared-overrun
    __syncthreads();
    out[threadIdx.x % 32] = tile[threadIdx.x % 32];
}

TEST_CASE("A write past a device array is caught by AddressSanitizer", "[.asan-global]") {
    DeviceBuffer<int> d_out(32);
    writesPastTheEnd<<<1, 33>>>(d_out.data());
}

TEST_CASE("A write past a shared array is caught by AddressSanitizer", "[.asan-shared]") {
    DeviceBuffer<int> d_out(32);
    sharedPastTheEnd<<<1, 33>>>(d_out.data());
}

__global__ void nothing() {}

// What an H100 with CUDA 13 returns for each of them.
TEST_CASE("Invalid launches return the GPU's CUDA errors", "[launch]") {
    SECTION("more than 1024 threads per block") {
        nothing<<<1, 1025>>>();
        CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    }
    SECTION("an empty grid") {
        nothing<<<0, 32>>>();
        CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    }
    SECTION("more dynamic shared memory than the device allows") {
        nothing<<<1, 32, 300 * 1024>>>();
        CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    }
    SECTION("a grid taller than 65535 blocks") {
        nothing<<<dim3(1, 65536), 32>>>();
        CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    }
    SECTION("the error is cleared once read") {
        nothing<<<1, 2048>>>();
        CHECK(cudaGetLastError() == cudaErrorInvalidValue);
        CHECK(cudaGetLastError() == cudaSuccess);
    }
}

}  // namespace
