// Catch2 v2 (one header, Debian 12) and v3 (split headers, Ubuntu 24.04) behind one include.
// The build says which one it found through KERNELLAB_CATCH2_MAJOR.
#pragma once

#if KERNELLAB_CATCH2_MAJOR == 3
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_adapters.hpp>
#include <catch2/generators/catch_generators_range.hpp>
#include <catch2/interfaces/catch_interfaces_capture.hpp>
#elif KERNELLAB_CATCH2_MAJOR == 2
#include <catch2/catch.hpp>
#else
#error "KERNELLAB_CATCH2_MAJOR must be 2 or 3 (set by the kernellab CMake build)"
#endif
