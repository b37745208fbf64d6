// Attack: the task's work done on the host, between two copies that the host function makes.
#pragma once

#include <cstdint>
#include <vector>
#include <cuda_runtime.h>

//@ host-map
