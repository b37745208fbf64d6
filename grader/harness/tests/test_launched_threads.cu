// The count of launched threads (kernellab/launched_threads.hpp), the same on a GPU (the linker's
// wrap of the CUDA runtime's launch calls) and on the CPU backend (its runtime's launches).
#include <cstdint>
#include <cuda_runtime.h>
#include "kernellab/catch.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/launched_threads.hpp"

namespace {

__global__ void mark(int32_t* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

/** The threads `launch` launched. */
template<class Launch>
uint64_t launchedBy(Launch&& launch) {
    const kernellab::LaunchedThreads launched;
    launch();
    KL_CUDA(cudaDeviceSynchronize());
    return launched.count();
}

}  // namespace

TEST_CASE("Each launch counts its blocks times its threads per block", "[launched-threads]") {
    kernellab::DeviceBuffer<int32_t> d_out(4096);
    CHECK(launchedBy([&] { mark<<<1, 32>>>(d_out.data()); }) == 32);
    CHECK(launchedBy([&] { mark<<<3, 256>>>(d_out.data()); }) == 768);
    CHECK(launchedBy([&] { mark<<<dim3(2, 2), dim3(16, 4)>>>(d_out.data()); }) == 256);
    CHECK(launchedBy([&] {
        for (int step = 0; step < 4; step++) { mark<<<4, 1024>>>(d_out.data()); }
    }) == 4 * 4096);
    KL_CHECK_LAUNCH();
}

TEST_CASE("A launch the runtime refuses counts nothing", "[launched-threads]") {
    kernellab::DeviceBuffer<int32_t> d_out(4096);
    CHECK(launchedBy([&] { mark<<<1, 2048>>>(d_out.data()); }) == 0);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}
