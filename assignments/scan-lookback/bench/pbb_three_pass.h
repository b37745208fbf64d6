// pbb's three-pass scan, for the benchmark (pbb_three_pass.cu).
#pragma once
#include <cstdint>

/** The elements of the scratch array that pbbScanInc takes. */
uint32_t pbbScratchElements();
/** pbb's reference scanInc<Add<int>> of d_in[0 .. n) into d_out, in blocks of `block` threads. */
void pbbScanInc(uint32_t block, uint32_t n, int* d_out, const int* d_in, int* d_tmp);
