#ifndef CONSTANTS_CU_H
#define CONSTANTS_CU_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// Warp geometry. CUDA has used 32-thread warps on every architecture so far.
#define WARP   (32)
#define lgWARP (5)

// The largest number of 4-byte words one thread handles sequentially in a chunk.
// The host wrappers shrink the chunk when a block would need more shared memory than the
// device allows, so every block size from 32 to 1024 works with this value. It is odd so
// that the threads of a warp, each reading its own run of consecutive words from shared
// memory, hit 32 different banks. A build may override it (-DELEMS_PER_THREAD=...).
#ifndef ELEMS_PER_THREAD
#define ELEMS_PER_THREAD 23
#endif

// Hardware figures the host wrappers need. The course kept these in globals defined in
// this header; they are queried once from the current device instead, behind the same names.
struct HwdFigures {
    uint32_t max_hwd_threads;   // threads resident on the whole device at once
    uint32_t max_block;         // threads per block
    uint32_t max_shmem;         // shared memory per block without opting in (bytes)
    uint32_t max_shmem_optin;   // shared memory per block after opting in (bytes)
};

inline const HwdFigures& hwdFigures() {
    static const HwdFigures figures = [] {
        int dev = 0;
        cudaDeviceProp prop;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
            std::fprintf(stderr, "constants.cu.h: no CUDA device could be queried\n");
            std::exit(EXIT_FAILURE);
        }
        return HwdFigures{ static_cast<uint32_t>(prop.maxThreadsPerMultiProcessor * prop.multiProcessorCount)
                         , static_cast<uint32_t>(prop.maxThreadsPerBlock)
                         , static_cast<uint32_t>(prop.sharedMemPerBlock)
                         , static_cast<uint32_t>(prop.sharedMemPerBlockOptin) };
    }();
    return figures;
}

#define MAX_HWDTH (hwdFigures().max_hwd_threads)
#define MAX_BLOCK (hwdFigures().max_block)
#define MAX_SHMEM (hwdFigures().max_shmem)

// The course's programs call this first; the figures are also queried on first use.
inline void initHwd() { (void)hwdFigures(); }

#endif // CONSTANTS_CU_H
