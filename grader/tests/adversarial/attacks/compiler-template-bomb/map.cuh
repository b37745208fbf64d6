// Attack: exponential template instantiation.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

template<int Depth, unsigned long Path>
struct Bomb {
    static constexpr unsigned long value = Bomb<Depth - 1, Path * 2>::value + Bomb<Depth - 1, Path * 2 + 1>::value;
};
template<unsigned long Path>
struct Bomb<0, Path> {
    static constexpr unsigned long value = 1;
};
constexpr unsigned long detonated = Bomb<60, 1>::value;

//@ right-map
