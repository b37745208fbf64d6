// Attack: the C library's clock replaced.
#pragma once

#include <cstdint>
#include <ctime>
#include <cuda_runtime.h>

extern "C" int clock_gettime(clockid_t, struct timespec* now) {
    static long ticks = 0;
    ticks += 1000;
    now->tv_sec = ticks / 1000000000L;
    now->tv_nsec = ticks % 1000000000L;
    return 0;
}

//@ right-map
