// The pbb reference's three-pass scanInc<Add<int>>, in a translation unit of its own: pbb's
// pbbKernels.cu.h and scan-lookback's operators.cu.h define the same operator classes.
#include "hostSkel.cu.h"
#include "pbb_three_pass.h"

uint32_t pbbScratchElements() { return MAX_BLOCK; }

void pbbScanInc(uint32_t block, uint32_t n, int* d_out, const int* d_in, int* d_tmp) {
    scanInc<Add<int>>(block, n, d_out, const_cast<int*>(d_in), d_tmp);
}
