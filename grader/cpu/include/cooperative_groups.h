// Cooperative groups on kernellab's CPU backend: the part of CUDA's <cooperative_groups.h> that
// block and warp code uses (thread_block, thread_block_tile<N> for N a power of two up to 32,
// thread_group, tiled_partition), so that student code including it builds unchanged here and
// with nvcc. Every member is the CUDA intrinsic that NVIDIA's header calls (CUDA 13.0): a block's
// sync is __syncthreads, a tile's sync __syncwarp with the tile's mask, a tile's shuffle
// __shfl_*_sync with the tile's mask and its size as the width. The runtime's checks (races,
// barrier divergence, deadlocks, misused warp collectives) therefore see through them, and name
// the student's line: what waits takes its caller's site as a default argument (details::caller).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <cuda_runtime.h>

namespace cooperative_groups {

namespace details {

using ::kernellab::cpu::Collective;
using ::kernellab::cpu::Site;

/**
 * The site of a call, as the default argument `Site site = caller()` of a function that waits:
 * GCC and Clang evaluate a default argument's __builtin_FILE and __builtin_LINE where the call is
 * written, but only there (written into `Site{...}` they would name this header).
 */
inline Site caller(const char* file = __builtin_FILE(), int line = __builtin_LINE()) { return Site{file, line}; }

/** The calling thread's rank in its block: its linear index, x fastest, as CUDA numbers lanes. */
inline unsigned blockRank() {
    const ::kernellab::cpu::ThreadState* self = ::kernellab::cpu::current_thread;
    return self->thread_idx.x + self->block_dim.x * (self->thread_idx.y + self->block_dim.y * self->thread_idx.z);
}
inline unsigned blockSize() {
    const dim3& block = ::kernellab::cpu::current_thread->block_dim;
    return block.x * block.y * block.z;
}
inline unsigned laneId() { return ::kernellab::cpu::current_thread->lane; }

/** The lanes of the calling thread's tile of `size` threads (a power of two up to 32). */
inline unsigned tileMask(unsigned size) {
    return size == 32 ? 0xffffffffu : ((1u << size) - 1) << (laneId() & ~(size - 1));
}

/**
 * A shuffle of what CUDA's cooperative groups shuffle, with the same limits: a trivially copyable
 * value of at most 32 bytes; one of more than 8 in 8-byte pieces, each moved by its own shuffle
 * (the runtime's shuffles move at most 8 bytes).
 */
template<class T>
T tileShuffle(Site site, Collective kind, unsigned mask, const T& var, int source, int width) {
    static_assert(std::is_trivially_copyable<T>::value, "Type is not compatible with device shuffle");
    static_assert(sizeof(T) <= 32, "Cooperative groups collectives are limited to types smaller than 32B");
    if constexpr (sizeof(T) <= 8) {
        return ::kernellab::cpu::shuffle(site, kind, mask, var, source, width);
    } else {
        unsigned char bytes[sizeof(T)];
        std::memcpy(bytes, &var, sizeof(T));
        for (size_t offset = 0; offset < sizeof(T); offset += 8) {
            const size_t length = sizeof(T) - offset < 8 ? sizeof(T) - offset : 8;
            uint64_t piece = 0;
            std::memcpy(&piece, bytes + offset, length);
            piece = ::kernellab::cpu::shuffle(site, kind, mask, piece, source, width);
            std::memcpy(bytes + offset, &piece, length);
        }
        T result = var;
        std::memcpy(static_cast<void*>(&result), bytes, sizeof(T));
        return result;
    }
}

/** The members of a tile of `Size` threads: its rank, barrier, shuffles and votes. */
template<unsigned int Size>
class tile_base {
    static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                  "kernellab CPU backend: thread_block_tile<Size> needs Size 1, 2, 4, 8, 16 or 32");

  public:
    static unsigned int thread_rank() { return blockRank() & (Size - 1); }
    static constexpr unsigned int num_threads() { return Size; }
    static constexpr unsigned int size() { return Size; }
    static void sync(Site site = caller()) {
        ::kernellab::cpu::warpCollective(site, Collective::SyncWarp, tileMask(Size));
    }

    template<class T>
    T shfl(T var, int src_rank, Site site = caller()) const {
        return tileShuffle(site, Collective::Shfl, tileMask(Size), var, src_rank, int(Size));
    }
    template<class T>
    T shfl_down(T var, unsigned int delta, Site site = caller()) const {
        return tileShuffle(site, Collective::ShflDown, tileMask(Size), var, int(delta), int(Size));
    }
    template<class T>
    T shfl_up(T var, unsigned int delta, Site site = caller()) const {
        return tileShuffle(site, Collective::ShflUp, tileMask(Size), var, int(delta), int(Size));
    }
    template<class T>
    T shfl_xor(T var, unsigned int lane_mask, Site site = caller()) const {
        return tileShuffle(site, Collective::ShflXor, tileMask(Size), var, int(lane_mask), int(Size));
    }

    int any(int predicate, Site site = caller()) const {
        return int(::kernellab::cpu::vote(site, Collective::Any, tileMask(Size), predicate));
    }
    int all(int predicate, Site site = caller()) const {
        return int(::kernellab::cpu::vote(site, Collective::All, tileMask(Size), predicate));
    }
    /** The tile's lanes whose predicate holds, bit i for the thread of rank i. */
    unsigned int ballot(int predicate, Site site = caller()) const {
        return ::kernellab::cpu::vote(site, Collective::Ballot, tileMask(Size), predicate) >> (laneId() & ~(Size - 1));
    }
};

}  // namespace details

class thread_block;
template<unsigned int Size, class ParentT = void>
class thread_block_tile;

/**
 * A group of any kind, as a value: the whole block, or one tile of it (CUDA's tiled_partition
 * with a size at run time, and any tile converted to thread_group).
 */
class thread_group {
  public:
    unsigned long long size() const { return tile_ == 0 ? details::blockSize() : size_; }
    unsigned long long num_threads() const { return size(); }
    unsigned long long thread_rank() const {
        return tile_ == 0 ? details::blockRank() : unsigned(__builtin_popcount(mask_ & ((1u << details::laneId()) - 1)));
    }
    void sync(details::Site site = details::caller()) const {
        if (tile_ == 0) {
            ::kernellab::cpu::syncThreads(site);
        } else {
            ::kernellab::cpu::warpCollective(site, details::Collective::SyncWarp, mask_);
        }
    }

  protected:
    /** The block (tile 0), or a tile of `tile` threads whose lanes are `mask`. */
    thread_group(unsigned tile, unsigned mask, unsigned size) : tile_(tile), mask_(mask), size_(size) {}

  private:
    friend thread_group tiled_partition(const thread_group& parent, unsigned int tilesz);
    unsigned tile_;
    unsigned mask_;
    unsigned size_;
};

/** The calling thread's block. */
class thread_block : public thread_group {
  public:
    static void sync(details::Site site = details::caller()) { ::kernellab::cpu::syncThreads(site); }
    static unsigned int size() { return details::blockSize(); }
    static unsigned int num_threads() { return details::blockSize(); }
    static unsigned int thread_rank() { return details::blockRank(); }
    static dim3 group_index() { return dim3(blockIdx); }
    static dim3 thread_index() { return dim3(threadIdx); }
    static dim3 group_dim() { return blockDim; }
    static dim3 dim_threads() { return blockDim; }

  private:
    thread_block() : thread_group(0, 0, 0) {}
    friend thread_block this_thread_block();
};

inline thread_block this_thread_block() { return thread_block(); }

namespace details {
template<unsigned int Size, class ParentT>
struct partitionable : std::false_type {};
template<unsigned int Size>
struct partitionable<Size, thread_block> : std::true_type {};
template<unsigned int Size, unsigned int ParentSize, class GrandParentT>
struct partitionable<Size, thread_block_tile<ParentSize, GrandParentT>> : std::integral_constant<bool, (Size < ParentSize)> {};
}  // namespace details

/** A tile whose parent is known at compile time: what tiled_partition<Size>(parent) returns. */
template<unsigned int Size, class ParentT>
class thread_block_tile : public details::tile_base<Size> {
  public:
    static unsigned int meta_group_rank() { return ParentT::thread_rank() / Size; }
    static unsigned int meta_group_size() { return (ParentT::size() + Size - 1) / Size; }
    operator thread_block_tile<Size, void>() const { return thread_block_tile<Size, void>(*this); }

  private:
    thread_block_tile() = default;
    template<unsigned int S, class P>
    friend thread_block_tile<S, P> tiled_partition(const P& parent);
};

/** A tile as a value of its own type, whatever its parent; also a thread_group. */
template<unsigned int Size>
class thread_block_tile<Size, void> : public thread_group, public details::tile_base<Size> {
    typedef details::tile_base<Size> tile;

  public:
    template<class ParentT>
    thread_block_tile(const thread_block_tile<Size, ParentT>& g)
        : thread_group(Size, details::tileMask(Size), Size), meta_group_rank_(g.meta_group_rank()),
          meta_group_size_(g.meta_group_size()) {}

    using tile::num_threads;
    using tile::size;
    using tile::sync;
    using tile::thread_rank;
    unsigned int meta_group_rank() const { return meta_group_rank_; }
    unsigned int meta_group_size() const { return meta_group_size_; }

  private:
    unsigned meta_group_rank_;
    unsigned meta_group_size_;
};

/**
 * The calling thread's tile of `Size` threads of `parent` (the block, or a larger tile): tiles
 * are consecutive ranks of the parent, the first starting at rank 0.
 */
template<unsigned int Size, class ParentT>
thread_block_tile<Size, ParentT> tiled_partition(const ParentT&) {
    static_assert(details::partitionable<Size, ParentT>::value,
                  "tiled_partition<Size> partitions a thread_block or a thread_block_tile larger than Size");
    return thread_block_tile<Size, ParentT>();
}

/**
 * The calling thread's tile of `tilesz` threads of the block or tile `parent`, as a thread_group;
 * the last tile of a block holds the threads there are. A GPU traps on a size that is not a power
 * of two up to 32; here that is an exception, which the runtime reports with the launch.
 */
inline thread_group tiled_partition(const thread_group& parent, unsigned int tilesz) {
    if (tilesz == 0 || tilesz > 32 || (tilesz & (tilesz - 1)) != 0) {
        throw std::invalid_argument("cooperative_groups::tiled_partition(parent, " + std::to_string(tilesz)
                                    + "): a tile's size must be a power of two of at most 32");
    }
    if (parent.tile_ != 0 && parent.size_ <= tilesz) { return parent; }
    const unsigned base = unsigned(parent.thread_rank()) & ~(tilesz - 1);
    const unsigned length = unsigned(parent.size()) - base < tilesz ? unsigned(parent.size()) - base : tilesz;
    const unsigned mask = (0xffffffffu >> (32 - length)) << (details::laneId() & ~(tilesz - 1));
    return thread_group(tilesz, mask, length);
}

// The functions of any group.
template<class GroupT>
void sync(const GroupT& group, details::Site site = details::caller()) {
    group.sync(site);
}
template<class GroupT>
auto thread_rank(const GroupT& group) -> decltype(group.thread_rank()) {
    return group.thread_rank();
}
template<class GroupT>
auto group_size(const GroupT& group) -> decltype(group.num_threads()) {
    return group.num_threads();
}

}  // namespace cooperative_groups
