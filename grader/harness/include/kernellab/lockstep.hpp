// A warp's lanes in lockstep on the CPU backend, for tasks that accept the lockstep idiom.
//
// On a GPU a converged warp runs its lanes in lockstep: in the course's warp scan without
// __syncwarp, `ptr[idx] = OP::apply(ptr[idx - h], ptr[idx])`, every lane reads before any lane
// writes. The CPU backend runs a warp's lanes one after another between barriers, so the same
// code reads values that other lanes have already overwritten. Under `warp_synchronous = "warn"`
// (only there: see kernellab_cpu/device.hpp) the tests' operators keep the lanes in step at each
// application: every lane reads its operands once all have reached the application, and writes
// its result once all have read theirs. The tests call the solution's functions with
// `Stepped<OP>`; on a GPU that is `OP` itself.
#pragma once

namespace kernellab {

#ifdef KERNELLAB_CPU_BACKEND
/**
 * `OP` whose `apply` is one lockstep step of the calling lane: it waits for the other lanes
 * before it reads its operands, and again before the caller writes the result. It passes its
 * arguments on as it got them, so it accepts exactly what OP accepts (the course's Mssp: only
 * non-const lvalues), and operands that are lvalues in shared memory (`ptr[idx - h]`) are read
 * only at the step's start.
 */
template<class OP>
class Stepped : public OP {
  public:
    template<class A, class B>
    static auto apply(A&& t1, B&& t2) -> decltype(OP::apply(static_cast<A&&>(t1), static_cast<B&&>(t2))) {
        ::kernellab::cpu::lockstepStep();
        auto result = OP::apply(static_cast<A&&>(t1), static_cast<B&&>(t2));
        ::kernellab::cpu::lockstepStep();
        return result;
    }
};
#else
template<class OP>
using Stepped = OP;
#endif

}  // namespace kernellab
