// Launched threads: how many CUDA threads a piece of host code launches, over all its kernels.
//
// A scan that launches N threads at every step and lets most of them idle does the work-efficient
// algorithm's arithmetic with O(N lg N) threads (CS149's scan: "a full credit solution will only
// launch one CUDA thread for each iteration of the innermost parallel loops"). A test counts the
// threads of the launches around the student's host function,
//
//     kernellab::LaunchedThreads launched;
//     exclusive_scan(d_input, n, d_result);
//     kernellab::recordProperty("threads-launched", "exclusive_scan", launched.count() * 100 / iterations, ...);
//
// and the manifest bounds it. The count is kept outside the test's translation unit: on a GPU by
// src/launches_cuda.cpp, which the linker puts between every GPU test executable and the CUDA
// runtime's launch calls (`--wrap`, as for the copies of host_traffic.hpp); on the CPU backend by
// its own runtime's launches. Only launches the runtime accepts count.
#pragma once

#include <cstdint>

namespace kernellab {

/** Threads (blocks times threads per block) of every kernel launch in this process so far. */
uint64_t threadsLaunched();

/** Counts the threads launched from its construction on. */
class LaunchedThreads {
  public:
    LaunchedThreads() : before_(threadsLaunched()) {}
    uint64_t count() const { return threadsLaunched() - before_; }

  private:
    uint64_t before_;
};

}  // namespace kernellab
