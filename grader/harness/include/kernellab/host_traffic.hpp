// Host traffic: how many bytes a piece of host code copies from device memory to host memory.
//
// A task's outputs computed on the host (copy the input down, compute, copy the result up) are
// correct results from a function that teaches nothing of the GPU (issue 16, principle 5). A test
// measures the copies of the student's host function around its call,
//
//     kernellab::HostTraffic traffic;
//     scanInc<OP>(block, n, d_out, d_in, d_tmp);
//     kernellab::recordProperty("bytes-to-host", "scanInc", traffic.bytesToHost(), kernellab::atMost(16));
//
// and the manifest bounds it (`[[tasks.requires]] property = "bytes-to-host"`). The count is kept
// outside the test's translation unit: on a GPU by kernellab_host_traffic
// (src/host_traffic_cuda.cpp), which the linker puts between every GPU test executable and the
// CUDA runtime's copies (`--wrap`); on the CPU backend by its own runtime's copies. The ways
// around those copies (the driver API, mapped or managed host memory, looking functions up at
// run time) are findings of the grader's symbol check (grader/kernellab/binary_checks.py).
#pragma once

#include <cstdint>

namespace kernellab {

/** Bytes the CUDA runtime's copies have moved from device memory to host memory in this process. */
uint64_t bytesCopiedToHost();

/** Counts the bytes copied from device to host memory from its construction on. */
class HostTraffic {
  public:
    HostTraffic() : before_(bytesCopiedToHost()) {}
    int64_t bytesToHost() const { return int64_t(bytesCopiedToHost() - before_); }

  private:
    uint64_t before_;
};

}  // namespace kernellab
