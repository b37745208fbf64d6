// cooperative_groups::reduce on kernellab's CPU backend: CUDA's reduction of a tile, computed as
// NVIDIA's header does without the sm_80 redux instructions (a butterfly of shfl_xor, each lane
// applying op(own, other)), so that every lane gets the same value as on a GPU, and each
// shuffle is checked like the student's own, at the line of the reduce.
#pragma once

#include <type_traits>
#include "../cooperative_groups.h"
#include "../kernellab_cpu/cooperative_functional.hpp"

namespace cooperative_groups {

template<class GroupT, class T, class Op>
auto reduce(const GroupT& group, T value, Op&& op, details::Site site = details::caller()) -> decltype(op(value, value)) {
    static_assert(details::is_tile<GroupT>::value,
                  "kernellab CPU backend: cooperative_groups::reduce takes a thread_block_tile of up to 32 threads");
    T out = value;
    for (unsigned mask = GroupT::size() >> 1; mask > 0; mask >>= 1) { out = op(out, group.shfl_xor(out, mask, site)); }
    return out;
}

}  // namespace cooperative_groups
