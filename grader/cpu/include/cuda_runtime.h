// The CUDA runtime of kernellab's CPU backend: what a .cu source and its host code use of
// CUDA, implemented on the CPU so that the same sources build with g++. Every source of a CPU
// build includes this first (-include), so `__global__` and friends mean something before the
// source's own #include <cuda_runtime.h>, which lands here again.
#pragma once

#include "kernellab_cpu/runtime_api.hpp"
#include "kernellab_cpu/device.hpp"
#include "kernellab_cpu/launch.hpp"
