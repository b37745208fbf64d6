// Attack: a process that outlives the test run.
#pragma once

#include <cstdint>
#include <ctime>
#include <sys/prctl.h>
#include <unistd.h>
#include <cuda_runtime.h>

namespace {
int leaveDaemon() {
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            prctl(PR_SET_NAME, "kl-adv-daemon");
            const time_t until = time(nullptr) + 120;
            for (volatile unsigned long spin = 0; time(nullptr) < until; spin = spin + 1) {}
        }
        _exit(0);
    }
    return 0;
}
const int left = leaveDaemon();
}  // namespace

//@ right-map
