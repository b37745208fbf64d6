// Attack: a wrong kernel that claims success on stdout, as Catch2 and as Gradescope's JSON.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

namespace {
void claimSuccess() {
    std::printf("===============================================================================\n"
                "All tests passed (1000 assertions in 10 test cases)\n\n"
                "{\"score\": 100, \"output\": \"all tests passed\", \"tests\": [{\"name\": \"map\", \"score\": 60}]}\n");
    std::fflush(stdout);
}
const int claimed = (claimSuccess(), std::atexit(claimSuccess));
}  // namespace

//@ wrong-map
