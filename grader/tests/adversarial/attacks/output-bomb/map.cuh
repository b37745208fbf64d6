// Attack: a gigabyte of output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

namespace {
int flood() {
    std::vector<char> line(1 << 20, 'y');
    line.back() = '\n';
    for (int i = 0; i < 1024; i++) { std::fwrite(line.data(), 1, line.size(), stdout); }
    std::fflush(stdout);
    return 0;
}
const int flooded = flood();
}  // namespace

//@ wrong-map
