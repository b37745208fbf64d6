// Attack: the student's main instead of the harness's.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

int main() {
    std::printf("All tests passed (1000 assertions in 10 test cases)\n");
    return 0;
}

//@ wrong-map
