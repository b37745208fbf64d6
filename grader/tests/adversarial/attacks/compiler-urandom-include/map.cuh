// Attack: an endless include.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>
#include "/dev/urandom"

//@ right-map
