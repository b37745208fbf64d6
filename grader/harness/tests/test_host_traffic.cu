// The count of bytes copied from device to host memory (kernellab/host_traffic.hpp), the same on a
// GPU (the linker's wrap of the CUDA runtime's copies) and on the CPU backend (its runtime's copies).
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>
#include "kernellab/catch.hpp"
#include "kernellab/cuda_check.hpp"
#include "kernellab/device_buffer.hpp"
#include "kernellab/host_traffic.hpp"

using kernellab::DeviceBuffer;

namespace {

__global__ void fill(int32_t* out, int32_t value) { out[threadIdx.x] = value; }

/** The bytes `copy` moved from device to host memory. */
template<class Copy>
int64_t movedToHost(Copy&& copy) {
    const kernellab::HostTraffic traffic;
    copy();
    KL_CUDA(cudaDeviceSynchronize());
    return traffic.bytesToHost();
}

}  // namespace

TEST_CASE("Copies into host memory count their bytes, by kind or by address", "[host-traffic]") {
    DeviceBuffer<int32_t> d_a(std::vector<int32_t>(64, 1)), d_b(64);
    std::vector<int32_t> host(64);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpy(host.data(), d_a.data(), 256, cudaMemcpyDeviceToHost)); }) == 256);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpy(host.data(), d_a.data(), 200, cudaMemcpyDefault)); }) == 200);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpyAsync(host.data(), d_a.data(), 128, cudaMemcpyDeviceToHost)); }) == 128);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpyAsync(host.data(), d_a.data(), 64, cudaMemcpyDefault)); }) == 64);
    CHECK(host[0] == 1);
}

TEST_CASE("Copies into device memory count nothing", "[host-traffic]") {
    DeviceBuffer<int32_t> d_a(std::vector<int32_t>(64, 1)), d_b(64);
    const std::vector<int32_t> host(64, 2);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpy(d_b.data(), d_a.data(), 256, cudaMemcpyDeviceToDevice)); }) == 0);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpy(d_b.data(), d_a.data(), 256, cudaMemcpyDefault)); }) == 0);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpy(d_b.data(), host.data(), 256, cudaMemcpyHostToDevice)); }) == 0);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpyAsync(d_b.data(), host.data(), 256, cudaMemcpyDefault)); }) == 0);
}

TEST_CASE("A copy that resolves addresses leaves a pending launch error as it was", "[host-traffic]") {
    DeviceBuffer<int32_t> d_a(64);
    std::vector<int32_t> host(64);
    fill<<<1, 2048>>>(d_a.data(), 3);  // too many threads: the launch fails
    const cudaError_t launch = cudaPeekAtLastError();
    REQUIRE(launch != cudaSuccess);
    const kernellab::HostTraffic traffic;
    cudaMemcpy(host.data(), d_a.data(), 256, cudaMemcpyDefault);
    CHECK(cudaGetLastError() == launch);
    CHECK(traffic.bytesToHost() == 256);
}

#if !KERNELLAB_CPU_BACKEND
// The copies the CPU backend does not have.
__device__ int32_t symbol[64];

TEST_CASE("Pitched, three-dimensional and symbol copies count what they move to the host", "[host-traffic]") {
    DeviceBuffer<int32_t> d_a(std::vector<int32_t>(64, 1));
    std::vector<int32_t> host(64);
    CHECK(movedToHost([&] {
        KL_CUDA(cudaMemcpy2D(host.data(), 64, d_a.data(), 64, 32, 4, cudaMemcpyDeviceToHost));
    }) == 128);
    CHECK(movedToHost([&] {
        KL_CUDA(cudaMemcpy2DAsync(host.data(), 64, d_a.data(), 64, 16, 4, cudaMemcpyDefault));
    }) == 64);
    cudaMemcpy3DParms parameters{};
    parameters.srcPtr = make_cudaPitchedPtr(d_a.data(), 64, 16, 2);
    parameters.dstPtr = make_cudaPitchedPtr(host.data(), 64, 16, 2);
    parameters.extent = make_cudaExtent(16, 2, 2);
    parameters.kind = cudaMemcpyDeviceToHost;
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpy3D(&parameters)); }) == 64);
    parameters.kind = cudaMemcpyDefault;
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpy3DAsync(&parameters)); }) == 64);
    CHECK(movedToHost([&] { KL_CUDA(cudaMemcpyFromSymbol(host.data(), symbol, 64)); }) == 64);
    CHECK(movedToHost([&] {
        KL_CUDA(cudaMemcpyFromSymbolAsync(host.data(), symbol, 32, 0, cudaMemcpyDefault));
    }) == 32);
    CHECK(movedToHost([&] {
        KL_CUDA(cudaMemcpyFromSymbol(d_a.data(), symbol, 64, 0, cudaMemcpyDeviceToDevice));
    }) == 0);
}

TEST_CASE("A device-to-device copy into host memory counts, where the runtime makes it", "[host-traffic]") {
    DeviceBuffer<int32_t> d_a(std::vector<int32_t>(64, 1));
    std::vector<int32_t> host(64);
    const kernellab::HostTraffic traffic;
    const cudaError_t status = cudaMemcpy(host.data(), d_a.data(), 256, cudaMemcpyDeviceToDevice);
    cudaGetLastError();
    INFO("cudaMemcpy DeviceToDevice into malloc'd memory: " << cudaGetErrorName(status));
    CHECK(traffic.bytesToHost() == (status == cudaSuccess ? 256 : 0));
}
#endif
