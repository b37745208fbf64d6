// kernellab::threadsLaunched on a GPU (kernellab/launched_threads.hpp): the CUDA runtime's kernel
// launches, seen through the linker like the copies of host_traffic_cuda.cpp (every GPU test
// executable is linked with `--wrap=<launch>` for each `__wrap_<launch>` defined here). A
// `<<<...>>>` launch reaches the runtime as __cudaLaunchKernel (CUDA 13's generated code, or its
// per-thread-stream variant) or cudaLaunchKernel (CUDA 12's, and code that calls it itself).
// One launch may pass through two of them inside the runtime: only the outermost counts.
#include <atomic>
#include <cstdint>
#include <cuda_runtime_api.h>
#include "kernellab/launched_threads.hpp"

namespace {

std::atomic<uint64_t> threads_launched{0};
thread_local int launch_depth = 0;

/** Calls `launch` with the launch depth raised, and counts its threads if it is the outermost one and succeeds. */
template<class Launch>
cudaError_t counted(dim3 grid, dim3 block, Launch&& launch) {
    ++launch_depth;
    const cudaError_t status = launch();
    --launch_depth;
    if (status == cudaSuccess && launch_depth == 0) {
        threads_launched += uint64_t(grid.x) * grid.y * grid.z * block.x * block.y * block.z;
    }
    return status;
}

}  // namespace

uint64_t kernellab::threadsLaunched() { return threads_launched.load(); }

extern "C" {

cudaError_t __real_cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream);

cudaError_t __wrap_cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) {
    return counted(grid, block, [&] { return __real_cudaLaunchKernel(func, grid, block, args, shared, stream); });
}

#if CUDART_VERSION >= 13000
cudaError_t __real___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream);
cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                           cudaStream_t stream);

cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) {
    return counted(grid, block, [&] { return __real___cudaLaunchKernel(kernel, grid, block, args, shared, stream); });
}

cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                           cudaStream_t stream) {
    return counted(grid, block, [&] { return __real___cudaLaunchKernel_ptsz(kernel, grid, block, args, shared, stream); });
}
#endif

}  // extern "C"
