// Sums, sums of squares, minimum, maximum and a count over N integers (argv[1],
// default 64 Ki, at most 4 Mi so that the sum fits an int): a tree reduction in shared
// memory per block, then global atomics (add, 64-bit add, min, max) across blocks.
// Integer arithmetic, so the result is exact in any order.
#include "check.h"

#define THREADS 256

struct Totals {
    int sum;
    unsigned long long squares;
    int min;
    int max;
    unsigned positives;
};

__global__ void reduce(const int *v, int n, Totals *out) {
    __shared__ int sums[THREADS];
    __shared__ unsigned long long squares[THREADS];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = i < n ? v[i] : 0;
    sums[threadIdx.x] = x;
    squares[threadIdx.x] = (unsigned long long)((long long)x * x);
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            sums[threadIdx.x] += sums[threadIdx.x + stride];
            squares[threadIdx.x] += squares[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(&out->sum, sums[0]);
        atomicAdd(&out->squares, squares[0]);
    }
    if (i < n) {
        atomicMin(&out->min, x);
        atomicMax(&out->max, x);
        if (x > 0) {
            atomicAdd(&out->positives, 1u);
        }
    }
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 1 << 16;
    if (n <= 0 || n > 1 << 22) {
        fprintf(stderr, "usage: %s [0 < N <= 4194304]\n", argv[0]);
        return 2;
    }
    int *v = (int *)malloc(n * sizeof(int));
    Totals want = {0, 0, 1 << 30, -(1 << 30), 0};
    for (int i = 0; i < n; i++) {
        v[i] = (int)((i * 7919L) % 1001) - 500;
        want.sum += v[i];
        want.squares += (unsigned long long)((long long)v[i] * v[i]);
        want.min = v[i] < want.min ? v[i] : want.min;
        want.max = v[i] > want.max ? v[i] : want.max;
        want.positives += v[i] > 0;
    }
    int *dv;
    Totals *dout;
    Totals init = {0, 0, 1 << 30, -(1 << 30), 0};
    HIP_CHECK(hipMalloc(&dv, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&dout, sizeof(Totals)));
    HIP_CHECK(hipMemcpy(dv, v, n * sizeof(int), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(dout, &init, sizeof(Totals), hipMemcpyHostToDevice));
    hipLaunchKernelGGL(reduce, dim3((n + THREADS - 1) / THREADS), dim3(THREADS), 0, 0, dv, n, dout);
    LAUNCH_CHECK();
    Totals got;
    HIP_CHECK(hipMemcpy(&got, dout, sizeof(Totals), hipMemcpyDeviceToHost));
    int failures = 0;
    if (got.sum != want.sum) report_mismatch(&failures, "sum", 0, got.sum, want.sum);
    if (got.squares != want.squares) {
        report_mismatch(&failures, "squares", 0, (double)got.squares, (double)want.squares);
    }
    if (got.min != want.min) report_mismatch(&failures, "min", 0, got.min, want.min);
    if (got.max != want.max) report_mismatch(&failures, "max", 0, got.max, want.max);
    if (got.positives != want.positives) {
        report_mismatch(&failures, "positives", 0, got.positives, want.positives);
    }
    printf("reduction: sum %d, squares %llu, min %d, max %d, positives %u\n", got.sum,
           got.squares, got.min, got.max, got.positives);
    // Field by field: the struct's padding is not part of the result.
    unsigned long long hash = DIGEST_START;
    hash = digest_bytes(hash, &got.sum, sizeof got.sum);
    hash = digest_bytes(hash, &got.squares, sizeof got.squares);
    hash = digest_bytes(hash, &got.min, sizeof got.min);
    hash = digest_bytes(hash, &got.max, sizeof got.max);
    hash = digest_bytes(hash, &got.positives, sizeof got.positives);
    print_digest(hash);
    HIP_CHECK(hipFree(dv));
    HIP_CHECK(hipFree(dout));
    free(v);
    return verdict(failures);
}
