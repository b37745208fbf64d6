// The fixture's map kernel, right, for attacks that replace only its host wrapper.
__global__ void mapKernel(const int32_t* x, int32_t* y, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = 3 * x[i] - 7; }
}
