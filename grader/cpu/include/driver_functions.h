// The CPU backend's driver_functions.h: what a course's starter code that includes it uses of
// it lives in the runtime (cuda_runtime.h).
#pragma once

#include "cuda_runtime.h"
