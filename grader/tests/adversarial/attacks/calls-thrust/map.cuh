// Attack: a forbidden library does the work.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/transform.h>

struct ThreeXMinusSeven {
    __host__ __device__ int32_t operator()(int32_t x) const { return 3 * x - 7; }
};

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t /*block*/) {
    thrust::transform(thrust::device, d_x, d_x + n, d_y, ThreeXMinusSeven());
}
