// Applicability probe (pbb_applicability.cuh): compiles exactly when the solution's chunked host
// wrappers can launch blocks of KERNELLAB_PROBE_BLOCK threads, the condition of the cases of
// mapReduce (non-commutative operators), scanInc and sgmScanInc at that block size.
#include "pbb_applicability.cuh"

static_assert(pbb::hostWrappersLaunch(KERNELLAB_PROBE_BLOCK),
              "this solution's host wrappers need more shared memory than a launch gets by default");
