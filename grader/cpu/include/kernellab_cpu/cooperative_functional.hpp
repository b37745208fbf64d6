// The operators of CUDA's cooperative_groups::reduce and the scans (cooperative_groups/reduce.h
// and scan.h both bring them, as CUDA's do), with CUDA's definitions: less and greater compare
// the same way round as NVIDIA's, so that equal but distinguishable values pick the same one.
#pragma once

#include <type_traits>
#include "../cooperative_groups.h"

namespace cooperative_groups {

template<class T>
struct plus {
    T operator()(T a, T b) const { return a + b; }
};
template<class T>
struct less {
    T operator()(T a, T b) const { return b < a ? b : a; }
};
template<class T>
struct greater {
    T operator()(T a, T b) const { return a < b ? b : a; }
};
template<class T>
struct bit_and {
    T operator()(T a, T b) const { return a & b; }
};
template<class T>
struct bit_or {
    T operator()(T a, T b) const { return a | b; }
};
template<class T>
struct bit_xor {
    T operator()(T a, T b) const { return a ^ b; }
};

namespace details {
/** Whether cooperative groups can reduce and scan over `GroupT`: the tiles (of up to 32 threads). */
template<class GroupT>
struct is_tile : std::false_type {};
template<unsigned int Size, class ParentT>
struct is_tile<thread_block_tile<Size, ParentT>> : std::true_type {};
}  // namespace details

}  // namespace cooperative_groups
