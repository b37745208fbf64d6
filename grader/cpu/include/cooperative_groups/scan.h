// cooperative_groups::inclusive_scan and exclusive_scan on kernellab's CPU backend: CUDA's scans
// of a tile, computed as NVIDIA's header does (CUDA 13.0), so that a lane gets what it gets on a
// GPU, non-commutative operators included: steps of shfl_up in which a lane applies
// op(own, received), and an exclusive scan that subtracts the lane's value for plus over an
// integer type, else shifts the inclusive one up a lane (rank 0 gets T{}). Each shuffle is
// checked like the student's own, at the line of the scan.
#pragma once

#include <type_traits>
#include "../cooperative_groups.h"
#include "../kernellab_cpu/cooperative_functional.hpp"

namespace cooperative_groups {

template<class GroupT, class T, class Op>
auto inclusive_scan(const GroupT& group, T value, Op&& op, details::Site site = details::caller())
    -> decltype(op(value, value)) {
    static_assert(details::is_tile<GroupT>::value,
                  "kernellab CPU backend: cooperative_groups::inclusive_scan takes a thread_block_tile of up to 32 threads");
    T out = value;
    for (unsigned mask = 1; mask < GroupT::size(); mask <<= 1) {
        const T received = group.shfl_up(out, mask, site);
        if (mask <= group.thread_rank()) { out = op(out, received); }
    }
    return out;
}

template<class GroupT, class T>
T inclusive_scan(const GroupT& group, T value, details::Site site = details::caller()) {
    return inclusive_scan(group, value, plus<T>(), site);
}

template<class GroupT, class T, class Op>
auto exclusive_scan(const GroupT& group, T value, Op&& op, details::Site site = details::caller())
    -> decltype(op(value, value)) {
    const T inclusive = inclusive_scan(group, value, op, site);
    if constexpr (std::is_same<std::decay_t<Op>, plus<T>>::value && std::is_integral<T>::value) {
        return inclusive - value;
    } else {
        const T shifted = group.shfl_up(inclusive, 1, site);
        return group.thread_rank() == 0 ? T{} : shifted;
    }
}

template<class GroupT, class T>
T exclusive_scan(const GroupT& group, T value, details::Site site = details::caller()) {
    return exclusive_scan(group, value, plus<T>(), site);
}

}  // namespace cooperative_groups
