// What the CPU backend's checks find. A finding that fails the test is thrown from the launch
// (the host call that made it, as if the launch had run synchronously), so Catch2 reports it
// with the test's captured inputs; a warning is printed and decides the exit status instead.
#pragma once

#include <stdexcept>
#include <string>

namespace kernellab::cpu {

enum class FindingKind {
    Race,                  // device memory differs between thread orders
    WarpSynchronousRace,   // ... and only orders within a warp make the difference
    BarrierDivergence,     // __syncthreads at different sites, or after threads exited
    Deadlock,              // threads wait for others that never come
    CollectiveMisuse,      // a warp collective's mask, source lane or participants are wrong
    SharedMemoryOverflow,  // the block's shared memory exceeds the device's limit
    KernelException,       // device code threw a C++ exception (no GPU could run it)
};

const char* findingName(FindingKind kind);

class Finding : public std::runtime_error {
  public:
    Finding(FindingKind kind, std::string file, int line, const std::string& message)
        : std::runtime_error(message), kind(kind), file(std::move(file)), line(line) {}
    FindingKind kind;
    std::string file;  // the site the finding points at
    int line;
};

/**
 * The exit status of a test executable: Catch2's own (`failed` test cases), unless a
 * warp-synchronous race was only warned about (manifest `warp_synchronous = "warn"`) and a
 * test case failed: the lanes are kept in step at each operator application only (lockstepStep),
 * so code that needs them in lockstep elsewhere may compute wrong values here; the verdict then
 * needs a GPU, and the status is 77, the one that kernellab and CTest read as "not run here".
 * With every test case passed, the warning stands beside a pass.
 */
int exitStatus(int failed);

/** The first warp-synchronous race that was only warned about, or "": the harness's main writes it
 * into the end record (record.hpp), where the judge reads it. */
std::string firstLockstepWarning();

}  // namespace kernellab::cpu
