// The CUDA driver API header of the CPU backend: the runtime's (cuda_runtime.h), which a course's
// starter code that includes <cuda.h> uses. The driver API's own functions are not provided.
#pragma once

#include "cuda_runtime.h"
