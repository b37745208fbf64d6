// kernellab::bytesCopiedToHost on a GPU (kernellab/host_traffic.hpp): the CUDA runtime's copies
// that can move device memory to host memory, seen through the linker. Every GPU test executable
// is linked with `--wrap=<copy>` for each `__wrap_<copy>` defined here (grader/harness/CMakeLists.txt
// reads the names from this file), so a call of <copy> in the test's translation unit, the
// student's host code included, lands here; `__real_<copy>` is the runtime's own (linked
// statically). Not wrapped: the copies that only write device memory (to a symbol, to an array,
// between devices) and the ones the grader's symbol check refuses instead (from arrays, batches,
// the per-thread-stream variants: grader/kernellab/binary_checks.py).
#include <atomic>
#include <cstdint>
#include <cuda_runtime_api.h>
#include "kernellab/host_traffic.hpp"

namespace {

std::atomic<uint64_t> copied_to_host{0};

/** Whether `ptr` is memory only the device holds (cudaMalloc's), as the runtime knows it. */
bool deviceOnly(const void* ptr) {
    const cudaError_t pending = cudaPeekAtLastError();
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
        if (pending == cudaSuccess) { cudaGetLastError(); }  // leave the caller's error state as it was
        return false;
    }
    return attributes.type == cudaMemoryTypeDevice;
}

/** Whether a copy of `kind` from `src` to `dst` moves device memory into host memory. */
bool toHost(void* dst, const void* src, cudaMemcpyKind kind) {
    switch (kind) {
        case cudaMemcpyDeviceToHost: return true;
        case cudaMemcpyHostToHost:
        case cudaMemcpyHostToDevice: return false;
        default:  // cudaMemcpyDefault, and cudaMemcpyDeviceToDevice, which the runtime resolves by address too
            return !deviceOnly(dst) && deviceOnly(src);
    }
}

cudaError_t counted(cudaError_t status, bool to_host, uint64_t bytes) {
    if (status == cudaSuccess && to_host) { copied_to_host += bytes; }
    return status;
}

/** A symbol's memory is device memory: a copy from it moves to the host unless `dst` is on the device. */
bool symbolToHost(void* dst, cudaMemcpyKind kind) {
    return kind == cudaMemcpyDeviceToHost || (kind != cudaMemcpyHostToHost && !deviceOnly(dst));
}

/** cudaMemcpy3D's parameters: arrays are device memory (the symbol check refuses them anyway). */
bool toHost3D(const cudaMemcpy3DParms* p) {
    return p->dstArray == nullptr && p->srcArray == nullptr && toHost(p->dstPtr.ptr, p->srcPtr.ptr, p->kind);
}
uint64_t bytes3D(const cudaMemcpy3DParms* p) { return uint64_t(p->extent.width) * p->extent.height * p->extent.depth; }

}  // namespace

uint64_t kernellab::bytesCopiedToHost() { return copied_to_host.load(); }

extern "C" {

cudaError_t __real_cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t __real_cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t __real_cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                                cudaMemcpyKind kind);
cudaError_t __real_cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t __real_cudaMemcpy3D(const cudaMemcpy3DParms* p);
cudaError_t __real_cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream);
cudaError_t __real_cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind);
cudaError_t __real_cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                             cudaMemcpyKind kind, cudaStream_t stream);

cudaError_t __wrap_cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    const bool to_host = toHost(dst, src, kind);
    return counted(__real_cudaMemcpy(dst, src, count, kind), to_host, count);
}

cudaError_t __wrap_cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
    const bool to_host = toHost(dst, src, kind);
    return counted(__real_cudaMemcpyAsync(dst, src, count, kind, stream), to_host, count);
}

cudaError_t __wrap_cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                                cudaMemcpyKind kind) {
    const bool to_host = toHost(dst, src, kind);
    return counted(__real_cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind), to_host, uint64_t(width) * height);
}

cudaError_t __wrap_cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
    const bool to_host = toHost(dst, src, kind);
    return counted(__real_cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream), to_host,
                   uint64_t(width) * height);
}

cudaError_t __wrap_cudaMemcpy3D(const cudaMemcpy3DParms* p) {
    const bool to_host = toHost3D(p);
    return counted(__real_cudaMemcpy3D(p), to_host, bytes3D(p));
}

cudaError_t __wrap_cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream) {
    const bool to_host = toHost3D(p);
    return counted(__real_cudaMemcpy3DAsync(p, stream), to_host, bytes3D(p));
}

cudaError_t __wrap_cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind) {
    const bool to_host = symbolToHost(dst, kind);
    return counted(__real_cudaMemcpyFromSymbol(dst, symbol, count, offset, kind), to_host, count);
}

cudaError_t __wrap_cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                             cudaMemcpyKind kind, cudaStream_t stream) {
    const bool to_host = symbolToHost(dst, kind);
    return counted(__real_cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, stream), to_host, count);
}

}  // extern "C"
