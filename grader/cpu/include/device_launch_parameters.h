// The CPU backend: threadIdx and friends come with cuda_runtime.h.
#pragma once
#include "cuda_runtime.h"
