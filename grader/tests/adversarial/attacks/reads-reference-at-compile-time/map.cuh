// Attack: the reference's source, taken at compile time when it is reachable.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#if __has_include("../../../reference/hostile/map.cuh")
#include "../../../reference/hostile/map.cuh"
#else
//@ wrong-map
#endif
