// CUDA error checking for test and benchmark code: every runtime call and every launch is
// checked, and a failure becomes an exception that names the call and where it was made.
#pragma once

#include <stdexcept>
#include <string>
#include <cuda_runtime.h>

namespace kernellab {

class CudaError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

inline void checkCuda(cudaError_t code, const char* what, const char* file, int line) {
    if (code != cudaSuccess) {
        throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + what + " failed: "
                        + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
    }
}

}  // namespace kernellab

/** Checks the result of a CUDA runtime call. */
#define KL_CUDA(call) ::kernellab::checkCuda((call), #call, __FILE__, __LINE__)

/** Checks the launches made since the last check, then waits for them to finish. */
#define KL_CHECK_LAUNCH()                                                                 \
    do {                                                                                   \
        ::kernellab::checkCuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__);   \
        ::kernellab::checkCuda(cudaDeviceSynchronize(), "kernel run", __FILE__, __LINE__); \
    } while (0)
