// The host side of the CUDA runtime API on the CPU backend: errors, device memory, copies,
// events, streams and the properties of the virtual device. Device memory is host memory that
// the backend keeps a table of, so that a launch can snapshot, restore and compare it.
#pragma once

#include <cstddef>
#include <cstdint>

// Function qualifiers: on the CPU every function is host code.
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
// Empty, not noinline: the standard library spells GCC's attribute `__noinline__` too.
#define __noinline__
#define __constant__
#define __managed__
#define __restrict__ __restrict
#define __launch_bounds__(...)

/** Three unsigned components: threadIdx and blockIdx. */
struct uint3 {
    unsigned int x, y, z;
};

/** Launch dimensions; unset components are 1, as in CUDA. */
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorLaunchFailure = 719,
};
typedef cudaError_t cudaError;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};

/** The fields of cudaDeviceProp that course code reads, with the values of the virtual device. */
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    size_t sharedMemPerBlockOptin;
    size_t sharedMemPerMultiprocessor;
    int regsPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int major;
    int minor;
    int multiProcessorCount;
    int maxThreadsPerMultiProcessor;
    int maxBlocksPerMultiProcessor;
    size_t totalConstMem;
};

struct CUevent_st;
struct CUstream_st;
typedef CUevent_st* cudaEvent_t;
typedef CUstream_st* cudaStream_t;

const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();

cudaError_t cudaMalloc(void** ptr, size_t bytes);
cudaError_t cudaMallocManaged(void** ptr, size_t bytes, unsigned int flags = 1);
cudaError_t cudaMallocHost(void** ptr, size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* ptr, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream = nullptr);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
// Stream flags: every stream of the CPU backend runs its work at once, in issue order.
constexpr unsigned int cudaStreamDefault = 0x0;
constexpr unsigned int cudaStreamNonBlocking = 0x1;
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

/** The typed overloads CUDA's own header has. */
template<class T>
cudaError_t cudaMalloc(T** ptr, size_t bytes) { return cudaMalloc(reinterpret_cast<void**>(ptr), bytes); }
template<class T>
cudaError_t cudaMallocManaged(T** ptr, size_t bytes, unsigned int flags = 1) {
    return cudaMallocManaged(reinterpret_cast<void**>(ptr), bytes, flags);
}
template<class T>
cudaError_t cudaMallocHost(T** ptr, size_t bytes) { return cudaMallocHost(reinterpret_cast<void**>(ptr), bytes); }

namespace kernellab::cpu {
cudaError_t setFuncAttribute(cudaFuncAttribute attr, int value);
}

template<class T>
cudaError_t cudaFuncSetAttribute(T* /*kernel*/, cudaFuncAttribute attr, int value) {
    return ::kernellab::cpu::setFuncAttribute(attr, value);
}
