// The solution under test, included as the course's own driver (testPBB.cu, pbb_main.cu)
// includes it: after the C library headers, which the course's headers use without including.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernellab_solution.h"  // generated: the solution's hostSkel.cu.h under its own name
