// Task warp-tail (rung 5).
#include "reduce_testing.cuh"

REDUCE_SEGMENT_RUNG_TESTS(reduceWarpTail, "[warp-tail]", 2 * block, Add<int32_t>, Add<float>, Max<int32_t>,
                          Min<int32_t>, Jitter<Add<int32_t>>)
