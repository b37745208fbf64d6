// Attack: the check redefined where a regex sees only a comment.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

static const char* const kOpen = "/*";
#include "kernellab/compare.hpp"
#undef KL_REQUIRE_EQUAL
#define KL_REQUIRE_EQUAL(device, host, equals, layout) ::kernellab::recordDevice(#device, host, false, layout)
static const char* const kClose = "*/";

//@ wrong-map
