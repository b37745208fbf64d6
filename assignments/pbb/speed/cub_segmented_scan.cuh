// CUB's segmented inclusive sum of ints, the baseline of sgmScanInc<Add<int>> in the speed program
// and the benchmark: one DeviceScan::InclusiveScan over (flag, value) pairs, with the sum lifted
// to them so that a set flag starts a segment. Like sgmScanInc it reads a 1-byte flag and a 4-byte
// value of each element and writes a 4-byte sum: the pairs exist only inside the scan.
//
// Its own pair type, not the solution's ValFlg and LiftOP: a baseline must not depend on the code
// it is compared with (a student's `kernellab test` builds the baselines against the student's).
#pragma once

#include <cstddef>

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/iterator/zip_iterator.h>

namespace cub_baseline {

/** A sum within a segment, and whether a segment starts in what it sums. */
struct SegmentSum {
    int sum;
    char starts;
};

struct ToSegmentSum {
    __host__ __device__ SegmentSum operator()(const thrust::tuple<char, int>& flag_value) const {
        return {thrust::get<1>(flag_value), thrust::get<0>(flag_value)};
    }
};

/** Associative, not commutative: a segment starting on the right discards the left's sum. */
struct SegmentedAdd {
    __host__ __device__ SegmentSum operator()(const SegmentSum& left, const SegmentSum& right) const {
        return {right.starts ? right.sum : left.sum + right.sum, char(left.starts | right.starts)};
    }
};

struct SumOf {
    __host__ __device__ int operator()(const SegmentSum& segment) const { return segment.sum; }
};

/**
 * `out[i]` the sum of `values` from the last set flag at or before i (from 0 if none) to i. As any
 * CUB call: with `scratch` null it only sets `scratch_bytes`, the scratch space it needs.
 */
inline cudaError_t segmentedInclusiveSum(void* scratch, size_t& scratch_bytes, int* out, const char* flags,
                                         const int* values, size_t n) {
    const auto segments = thrust::make_transform_iterator(thrust::make_zip_iterator(flags, values), ToSegmentSum{});
    return cub::DeviceScan::InclusiveScan(scratch, scratch_bytes, segments,
                                          thrust::make_transform_output_iterator(out, SumOf{}), SegmentedAdd{}, n);
}

}  // namespace cub_baseline
