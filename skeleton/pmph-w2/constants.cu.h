// kernellab's compat fixture of the PMPH course's constants file, 2020-2023 shape (not the
// course's code): hardware figures in globals that stay zero until initHwd() fills them.
#ifndef PMPH_COMPAT_CONSTANTS
#define PMPH_COMPAT_CONSTANTS

#include <sys/time.h>
#include <time.h>

#define DEBUG_INFO  false

#define lgWARP      5
#define WARP        (1 << lgWARP)

#define RUNS_GPU    100
#define RUNS_CPU    5
#define NUM_BLOCKS_SCAN     1024
#define ELEMS_PER_THREAD    12

typedef unsigned int uint32_t;
typedef int           int32_t;

uint32_t MAX_HWDTH;
uint32_t MAX_BLOCK;
uint32_t MAX_SHMEM;

cudaDeviceProp prop;

void initHwd() {
    int devices = 0;
    cudaGetDeviceCount(&devices);
    cudaGetDeviceProperties(&prop, 0);
    MAX_HWDTH = prop.multiProcessorCount * prop.maxThreadsPerMultiProcessor;
    MAX_BLOCK = prop.maxThreadsPerBlock;
    MAX_SHMEM = prop.sharedMemPerBlock;
    if (DEBUG_INFO) { printf("%s: %u threads, blocks of up to %u\n", prop.name, MAX_HWDTH, MAX_BLOCK); }
}

int timeval_subtract(struct timeval* result, struct timeval* t2, struct timeval* t1) {
    const long long micros = (t2->tv_sec - t1->tv_sec) * 1000000LL + (t2->tv_usec - t1->tv_usec);
    result->tv_sec = micros / 1000000;
    result->tv_usec = micros % 1000000;
    return micros < 0;
}

#endif
