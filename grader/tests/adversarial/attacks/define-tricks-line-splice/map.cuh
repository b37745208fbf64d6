// Attack: the check redefined, its names split across lines.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "kernellab/comp\
are.hpp"
#undef KL_REQUIRE_\
EQUAL
#define KL_REQUIRE_\
EQUAL(device, host, equals, layout) ::kernellab::record\
Device(#device, host, false, layout)

//@ wrong-map
