// A 256-bin histogram of N bytes with atomics: each block counts into its own bins in
// LDS (ds_add), reading four bytes per load in a grid-stride loop, then adds its bins
// to the global histogram with global atomics. A quarter of the bytes fall in eight hot
// bins, so atomics on the same address collide as they do on real data.
//
// argv[1]: N (default 16 Mi), a multiple of 4.
#include "apps.h"

#define BINS 256
#define THREADS 256
#define MAX_BLOCKS 1024

__global__ void histogram(const unsigned *words, long n_words, unsigned *bins) {
    __shared__ unsigned local[BINS];
    local[threadIdx.x] = 0;
    __syncthreads();
    const long stride = (long)gridDim.x * blockDim.x;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n_words; i += stride) {
        const unsigned w = words[i];
        atomicAdd(&local[w & 0xff], 1u);
        atomicAdd(&local[w >> 8 & 0xff], 1u);
        atomicAdd(&local[w >> 16 & 0xff], 1u);
        atomicAdd(&local[w >> 24], 1u);
    }
    __syncthreads();
    if (local[threadIdx.x] != 0) {
        atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
    }
}

int main(int argc, char **argv) {
    const long n = argc > 1 ? atol(argv[1]) : 16L << 20;
    if (n <= 0 || n % 4 || n > 1L << 30) {
        fprintf(stderr, "usage: %s [N, a multiple of 4]\n", argv[0]);
        return 2;
    }
    unsigned char *data = (unsigned char *)malloc(n);
    if (!data) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    unsigned want[BINS] = {0};
    for (long i = 0; i < n; i++) {
        const unsigned h = mix32(i, 5);
        data[i] = (unsigned char)(h >> 8 & 3 ? h & 0xff : h & 7);
        want[data[i]]++;
    }
    unsigned char *ddata;
    unsigned *dbins;
    HIP_CHECK(hipMalloc(&ddata, n));
    HIP_CHECK(hipMalloc(&dbins, BINS * sizeof(unsigned)));
    HIP_CHECK(hipMemcpy(ddata, data, n, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemset(dbins, 0, BINS * sizeof(unsigned)));
    const long n_words = n / 4;
    long blocks = (n_words + THREADS - 1) / THREADS;
    blocks = blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS;
    hipLaunchKernelGGL(histogram, dim3((unsigned)blocks), dim3(THREADS), 0, 0, (const unsigned *)ddata, n_words,
                       dbins);
    LAUNCH_CHECK();
    unsigned got[BINS];
    HIP_CHECK(hipMemcpy(got, dbins, sizeof got, hipMemcpyDeviceToHost));
    int failures = 0;
    for (int b = 0; b < BINS; b++) {
        if (got[b] != want[b]) report_mismatch(&failures, "bins", b, got[b], want[b]);
    }
    printf("histogram: %ld bytes, %d bins, %ld blocks\n", n, BINS, blocks);
    print_digest(digest_bytes(DIGEST_START, got, sizeof got));
    HIP_CHECK(hipFree(ddata));
    HIP_CHECK(hipFree(dbins));
    free(data);
    return verdict(failures);
}
