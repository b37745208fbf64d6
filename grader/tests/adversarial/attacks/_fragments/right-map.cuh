// The fixture's map, right (what the reference computes), for attacks on something else.
__global__ void mapKernel(const int32_t* x, int32_t* y, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = 3 * x[i] - 7; }
}

inline void mapInts(const int32_t* d_x, int32_t* d_y, uint32_t n, uint32_t block) {
    mapKernel<<<(n + block - 1) / block, block>>>(d_x, d_y, n);
}
