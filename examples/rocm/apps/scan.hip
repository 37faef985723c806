// Inclusive prefix sum (scan) of N 32-bit integers, modulo 2^32, in the classic
// three-phase form: each block of 256 threads scans 1024 elements in LDS (four per
// thread in registers, then a Hillis-Steele scan of the 256 thread totals) and writes
// its total; the block totals are scanned the same way, recursively; then every block
// adds the scanned totals of the blocks before it.
//
// argv[1]: N (default 16 Mi).
#include "apps.h"

#define THREADS 256
#define ITEMS 4
#define PER_BLOCK (THREADS * ITEMS)

__global__ void scan_blocks(const unsigned *in, unsigned *out, unsigned *totals, long n) {
    __shared__ unsigned items[PER_BLOCK];
    __shared__ unsigned sums[2][THREADS];
    const long base = (long)blockIdx.x * PER_BLOCK;
    const int t = threadIdx.x;
    for (int j = 0; j < ITEMS; j++) {
        const long i = base + j * THREADS + t;
        items[j * THREADS + t] = i < n ? in[i] : 0;
    }
    __syncthreads();
    unsigned own[ITEMS], running = 0;
    for (int j = 0; j < ITEMS; j++) {
        running += items[t * ITEMS + j];
        own[j] = running;
    }
    int from = 0;
    sums[from][t] = running;
    __syncthreads();
    for (int offset = 1; offset < THREADS; offset *= 2) {
        const unsigned v = sums[from][t] + (t >= offset ? sums[from][t - offset] : 0);
        from ^= 1;
        sums[from][t] = v;
        __syncthreads();
    }
    const unsigned before = t > 0 ? sums[from][t - 1] : 0;
    for (int j = 0; j < ITEMS; j++) items[t * ITEMS + j] = own[j] + before;
    __syncthreads();
    for (int j = 0; j < ITEMS; j++) {
        const long i = base + j * THREADS + t;
        if (i < n) out[i] = items[j * THREADS + t];
    }
    if (t == THREADS - 1) totals[blockIdx.x] = sums[from][t];
}

__global__ void add_offsets(unsigned *out, const unsigned *scanned_totals, long n) {
    if (blockIdx.x == 0) return;
    const unsigned offset = scanned_totals[blockIdx.x - 1];
    const long base = (long)blockIdx.x * PER_BLOCK;
    for (int j = 0; j < ITEMS; j++) {
        const long i = base + j * THREADS + threadIdx.x;
        if (i < n) out[i] += offset;
    }
}

// Scans `n` elements of `in` into `out` on the device; returns the kernels launched.
static int scan(const unsigned *in, unsigned *out, long n) {
    const long blocks = (n + PER_BLOCK - 1) / PER_BLOCK;
    unsigned *totals, *scanned;
    HIP_CHECK(hipMalloc(&totals, blocks * sizeof(unsigned)));
    hipLaunchKernelGGL(scan_blocks, dim3((unsigned)blocks), dim3(THREADS), 0, 0, in, out, totals, n);
    HIP_CHECK(hipGetLastError());
    int launches = 1;
    if (blocks > 1) {
        HIP_CHECK(hipMalloc(&scanned, blocks * sizeof(unsigned)));
        launches += scan(totals, scanned, blocks);
        hipLaunchKernelGGL(add_offsets, dim3((unsigned)blocks), dim3(THREADS), 0, 0, out, scanned, n);
        HIP_CHECK(hipGetLastError());
        launches++;
        HIP_CHECK(hipDeviceSynchronize());
        HIP_CHECK(hipFree(scanned));
    }
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipFree(totals));
    return launches;
}

int main(int argc, char **argv) {
    const long n = argc > 1 ? atol(argv[1]) : 16L << 20;
    if (n <= 0 || n > 1L << 30) {
        fprintf(stderr, "usage: %s [N]\n", argv[0]);
        return 2;
    }
    const size_t bytes = n * sizeof(unsigned);
    unsigned *in = (unsigned *)malloc(bytes), *out = (unsigned *)malloc(bytes);
    if (!in || !out) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    for (long i = 0; i < n; i++) in[i] = mix32(i, 6);
    unsigned *din, *dout;
    HIP_CHECK(hipMalloc(&din, bytes));
    HIP_CHECK(hipMalloc(&dout, bytes));
    HIP_CHECK(hipMemcpy(din, in, bytes, hipMemcpyHostToDevice));
    const int launches = scan(din, dout, n);
    HIP_CHECK(hipMemcpy(out, dout, bytes, hipMemcpyDeviceToHost));
    int failures = 0;
    unsigned running = 0;
    for (long i = 0; i < n; i++) {
        running += in[i];
        if (out[i] != running) report_mismatch(&failures, "out", i, out[i], running);
    }
    printf("scan: %ld elements, %d kernels\n", n, launches);
    print_digest(digest_bytes(DIGEST_START, out, bytes));
    HIP_CHECK(hipFree(din));
    HIP_CHECK(hipFree(dout));
    free(in);
    free(out);
    return verdict(failures);
}
