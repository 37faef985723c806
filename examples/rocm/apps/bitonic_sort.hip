// Bitonic sort of 2^L 32-bit keys, ascending. The merges whose compare distance is
// under 1024 elements run in LDS, a block of 512 threads per 1024-element chunk (one
// kernel sorts every chunk, one kernel finishes each larger merge); the longer
// distances are one kernel launch each over the whole array in global memory. 2^20
// keys take 66 launches.
//
// argv[1]: L (default 20), 11 to 28.
#include <algorithm>

#include "apps.h"

#define CHUNK 1024
#define THREADS (CHUNK / 2)

// Compares keys[lo] and keys[hi] and swaps them unless they are in the direction that
// the merge of `size`-element sequences gives position `lo` (ascending where bit
// `size` of the position is clear).
__device__ static void compare_exchange(unsigned *keys, unsigned lo, unsigned hi, unsigned position, unsigned size) {
    const unsigned a = keys[lo], b = keys[hi];
    const bool ascending = (position & size) == 0;
    if ((a > b) == ascending) {
        keys[lo] = b;
        keys[hi] = a;
    }
}

// The pair that thread `t` handles at compare distance `stride`: its lower index.
__device__ static unsigned lower_of_pair(unsigned t, unsigned stride) {
    return 2 * stride * (t / stride) + t % stride;
}

// Merges at distances `first_stride` down to 1 inside each chunk, for every sequence
// size from `first_size` up to `last_size` (a full sort of each chunk, or the end of
// one larger merge).
__global__ void merge_in_lds(unsigned *keys, unsigned first_size, unsigned last_size) {
    __shared__ unsigned chunk[CHUNK];
    const unsigned base = blockIdx.x * CHUNK, t = threadIdx.x;
    chunk[t] = keys[base + t];
    chunk[t + THREADS] = keys[base + t + THREADS];
    __syncthreads();
    for (unsigned size = first_size; size <= last_size; size *= 2) {
        for (unsigned stride = size < CHUNK ? size / 2 : CHUNK / 2; stride > 0; stride /= 2) {
            const unsigned lo = lower_of_pair(t, stride);
            compare_exchange(chunk, lo, lo + stride, base + lo, size);
            __syncthreads();
        }
    }
    keys[base + t] = chunk[t];
    keys[base + t + THREADS] = chunk[t + THREADS];
}

// One step of a merge of `size`-element sequences at distance `stride` (at least one
// chunk), over the whole array.
__global__ void merge_global(unsigned *keys, unsigned size, unsigned stride) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned lo = lower_of_pair(t, stride);
    compare_exchange(keys, lo, lo + stride, lo, size);
}

int main(int argc, char **argv) {
    const int log_n = argc > 1 ? atoi(argv[1]) : 20;
    if (log_n < 11 || log_n > 28) {
        fprintf(stderr, "usage: %s [L from 11 to 28]\n", argv[0]);
        return 2;
    }
    const unsigned n = 1u << log_n;
    unsigned *keys = (unsigned *)malloc(n * sizeof(unsigned)), *want = (unsigned *)malloc(n * sizeof(unsigned));
    if (!keys || !want) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    for (unsigned i = 0; i < n; i++) keys[i] = want[i] = mix32(i, 7);
    unsigned *dkeys;
    HIP_CHECK(hipMalloc(&dkeys, n * sizeof(unsigned)));
    HIP_CHECK(hipMemcpy(dkeys, keys, n * sizeof(unsigned), hipMemcpyHostToDevice));
    const dim3 chunks(n / CHUNK), pairs(n / 2 / THREADS);
    hipLaunchKernelGGL(merge_in_lds, chunks, dim3(THREADS), 0, 0, dkeys, 2u, (unsigned)CHUNK);
    int launches = 1;
    for (unsigned size = 2 * CHUNK; size <= n; size *= 2) {
        for (unsigned stride = size / 2; stride >= CHUNK; stride /= 2) {
            hipLaunchKernelGGL(merge_global, pairs, dim3(THREADS), 0, 0, dkeys, size, stride);
            launches++;
        }
        hipLaunchKernelGGL(merge_in_lds, chunks, dim3(THREADS), 0, 0, dkeys, size, size);
        launches++;
    }
    LAUNCH_CHECK();
    HIP_CHECK(hipMemcpy(keys, dkeys, n * sizeof(unsigned), hipMemcpyDeviceToHost));
    std::sort(want, want + n);
    int failures = 0;
    for (unsigned i = 0; i < n; i++) {
        if (keys[i] != want[i]) report_mismatch(&failures, "keys", i, keys[i], want[i]);
    }
    printf("bitonic_sort: %u keys, %d kernels\n", n, launches);
    print_digest(digest_bytes(DIGEST_START, keys, n * sizeof(unsigned)));
    HIP_CHECK(hipFree(dkeys));
    free(keys);
    free(want);
    return verdict(failures);
}
