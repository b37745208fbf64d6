// Parallel prefix sum on the GPU, and finding repeated neighbours with it: the file students
// hand in, shaped like the course's starter (CS149 assignment 3, part 2). The grader calls
// exclusive_scan and find_repeats directly; main.cpp and the Makefile of the course are not used.
#include <stdio.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include <driver_functions.h>

#include <thrust/scan.h>
#include <thrust/device_ptr.h>
#include <thrust/device_malloc.h>
#include <thrust/device_free.h>

#include "CycleTimer.h"

#define THREADS_PER_BLOCK 256


// The smallest power of two at or above n (n >= 1): the length cudaScan allocates.
static inline int nextPow2(int n) {
    n--;
    n |= n >> 1;
    n |= n >> 2;
    n |= n >> 4;
    n |= n >> 8;
    n |= n >> 16;
    n++;
    return n;
}

// BEGIN SOLUTION exclusive-scan
// The blocks that give each of `iterations` iterations a thread of its own.
static inline int blocksFor(int iterations) {
    return (iterations + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
}

// One step of the up-sweep: iteration k of the step's loop adds the left half's total of the k-th
// pair of subtrees of width two_d into the right half's last element.
__global__ void upsweepStep(int* data, int iterations, int two_d) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < iterations) {
        const size_t right = size_t(k + 1) * 2 * two_d - 1;
        data[right] += data[right - two_d];
    }
}

// One step of the down-sweep: iteration k hands the k-th pair's prefix to its left half and
// the prefix plus the left half's total to its right half.
__global__ void downsweepStep(int* data, int iterations, int two_d) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < iterations) {
        const size_t right = size_t(k + 1) * 2 * two_d - 1;
        const int left_total = data[right - two_d];
        data[right - two_d] = data[right];
        data[right] += left_total;
    }
}
// END SOLUTION

/**
 * TASK exclusive-scan: the work-efficient exclusive scan, one thread per iteration.
 *
 * `result[i]` becomes the sum of `input[0..i)` for every i < N (`result[0]` = 0). Both arrays
 * are device memory of nextPow2(N) ints, as cudaScan allocates them, and `result` already holds
 * a copy of the first N elements of `input`, so the scan may work in place in `result` and use
 * its elements past N (their values are undefined and no result there is checked).
 *
 * Write the up-sweep and down-sweep of the handout's pseudocode, one kernel launch per step of
 * their outer loops. Launch one CUDA thread for each iteration of that step's inner
 * `parallel_for`, not N threads that mostly test their index and idle: at the up-sweep's last
 * step only one iteration is left. The grader counts the threads you launch.
 */
void exclusive_scan(int* input, int N, int* result)
{
    // BEGIN SOLUTION exclusive-scan
    const int rounded = nextPow2(N);
    cudaMemcpy(result, input, size_t(N) * sizeof(int), cudaMemcpyDeviceToDevice);
    for (int two_d = 1; two_d <= rounded / 2; two_d *= 2) {
        const int iterations = rounded / (2 * two_d);
        upsweepStep<<<blocksFor(iterations), THREADS_PER_BLOCK>>>(result, iterations, two_d);
    }
    cudaMemset(result + rounded - 1, 0, sizeof(int));
    for (int two_d = rounded / 2; two_d >= 1; two_d /= 2) {
        const int iterations = rounded / (2 * two_d);
        downsweepStep<<<blocksFor(iterations), THREADS_PER_BLOCK>>>(result, iterations, two_d);
    }
    // STUB
    // // CS149 TODO: the up-sweep and down-sweep, a kernel launch per step.
    // END SOLUTION
}


// cudaScan: the course's timing wrapper around exclusive_scan (given; not graded).
double cudaScan(int* inarray, int* end, int* resultarray)
{
    int* device_result;
    int* device_input;
    int N = end - inarray;
    int rounded_length = nextPow2(end - inarray);

    cudaMalloc((void **)&device_result, sizeof(int) * rounded_length);
    cudaMalloc((void **)&device_input, sizeof(int) * rounded_length);
    cudaMemcpy(device_input, inarray, (end - inarray) * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(device_result, inarray, (end - inarray) * sizeof(int), cudaMemcpyHostToDevice);

    double startTime = CycleTimer::currentSeconds();
    exclusive_scan(device_input, N, device_result);
    cudaDeviceSynchronize();
    double endTime = CycleTimer::currentSeconds();

    cudaMemcpy(resultarray, device_result, (end - inarray) * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(device_result);
    cudaFree(device_input);
    return endTime - startTime;
}


// cudaScanThrust: the same timing around Thrust's exclusive scan (given; the speed baseline).
double cudaScanThrust(int* inarray, int* end, int* resultarray) {
    int length = end - inarray;
    thrust::device_ptr<int> d_input = thrust::device_malloc<int>(length);
    thrust::device_ptr<int> d_output = thrust::device_malloc<int>(length);

    cudaMemcpy(d_input.get(), inarray, length * sizeof(int), cudaMemcpyHostToDevice);

    double startTime = CycleTimer::currentSeconds();
    thrust::exclusive_scan(d_input, d_input + length, d_output);
    cudaDeviceSynchronize();
    double endTime = CycleTimer::currentSeconds();

    cudaMemcpy(resultarray, d_output.get(), length * sizeof(int), cudaMemcpyDeviceToHost);
    thrust::device_free(d_input);
    thrust::device_free(d_output);
    return endTime - startTime;
}


// BEGIN SOLUTION find-repeats
// flags[i] = 1 where input[i] == input[i+1] (i + 1 < length), else 0, for every i < rounded.
__global__ void markRepeats(const int* input, int length, int rounded, int* flags) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rounded) {
        flags[i] = i + 1 < length && input[i] == input[i + 1] ? 1 : 0;
    }
}

// Each marked index i goes to output[positions[i]], its rank among the marked ones.
__global__ void scatterRepeats(const int* flags, const int* positions, int length, int* output) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < length && flags[i] == 1) {
        output[positions[i]] = i;
    }
}
// END SOLUTION

/**
 * TASK find-repeats: the indices of repeated neighbours, with exclusive_scan.
 *
 * Writes, in increasing order, every index i with `device_input[i] == device_input[i+1]`
 * (i + 1 < length) to the front of `device_output`, and returns how many there are. Both arrays
 * are device memory of nextPow2(length) ints; `device_output` holds nothing yet.
 *
 * Mark the repeats, scan the marks with your exclusive_scan (their exclusive prefix sum is each
 * repeat's place in the output), then write each repeat to its place: every step on the GPU.
 * Only the count comes back to the host, never the marks or the positions.
 */
int find_repeats(int* device_input, int length, int* device_output) {
    // BEGIN SOLUTION find-repeats
    const int rounded = nextPow2(length);
    int* flags;
    int* positions;
    cudaMalloc((void **)&flags, sizeof(int) * rounded);
    cudaMalloc((void **)&positions, sizeof(int) * rounded);
    markRepeats<<<(rounded + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK, THREADS_PER_BLOCK>>>(
        device_input, length, rounded, flags);
    exclusive_scan(flags, rounded, positions);
    scatterRepeats<<<(length + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK, THREADS_PER_BLOCK>>>(
        flags, positions, length, device_output);
    // The last position is the count: the last flag is 0 (no element follows the last one).
    int count = 0;
    cudaMemcpy(&count, positions + rounded - 1, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(flags);
    cudaFree(positions);
    return count;
    // STUB
    // // CS149 TODO: mark, scan with exclusive_scan, write the repeats' indices.
    // return 0;
    // END SOLUTION
}


// cudaFindRepeats: the course's timing wrapper around find_repeats (given; not graded).
double cudaFindRepeats(int *input, int length, int *output, int *output_length) {
    int *device_input;
    int *device_output;
    int rounded_length = nextPow2(length);

    cudaMalloc((void **)&device_input, rounded_length * sizeof(int));
    cudaMalloc((void **)&device_output, rounded_length * sizeof(int));
    cudaMemcpy(device_input, input, length * sizeof(int), cudaMemcpyHostToDevice);

    cudaDeviceSynchronize();
    double startTime = CycleTimer::currentSeconds();
    int result = find_repeats(device_input, length, device_output);
    cudaDeviceSynchronize();
    double endTime = CycleTimer::currentSeconds();

    *output_length = result;
    cudaMemcpy(output, device_output, length * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(device_input);
    cudaFree(device_output);
    return endTime - startTime;
}


// printCudaInfo: the devices the course's main program reports (given; not graded).
void printCudaInfo()
{
    int deviceCount = 0;
    cudaGetDeviceCount(&deviceCount);
    printf("Found %d CUDA devices\n", deviceCount);
    for (int i = 0; i < deviceCount; i++) {
        cudaDeviceProp deviceProps;
        cudaGetDeviceProperties(&deviceProps, i);
        printf("Device %d: %s, %d SMs, %.0f MB, compute capability %d.%d\n", i, deviceProps.name,
               deviceProps.multiProcessorCount, static_cast<float>(deviceProps.totalGlobalMem) / (1024 * 1024),
               deviceProps.major, deviceProps.minor);
    }
}
