// Task interleaved (rung 3).
#include "reduce_testing.cuh"

REDUCE_SEGMENT_RUNG_TESTS(reduceInterleaved, "[interleaved]", block, Add<int32_t>, Add<float>, Max<int32_t>,
                          Min<int32_t>, Jitter<Add<int32_t>>)
