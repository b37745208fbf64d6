// The CPU backend stands in for the CUDA runtime API header too.
#pragma once
#include "cuda_runtime.h"
