// c = a + b on N floats (N from argv[1], default 1 Mi), checked against the CPU.
#include "check.h"

__global__ void vector_add(const float *a, const float *b, float *c, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1L << 20;
    if (n <= 0) {
        fprintf(stderr, "usage: %s [N > 0]\n", argv[0]);
        return 2;
    }
    size_t bytes = (size_t)n * sizeof(float);
    float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    for (long i = 0; i < n; i++) {
        a[i] = (float)(i % 1000) * 0.5f;
        b[i] = (float)(i % 777) - 300.0f;
    }
    float *da, *db, *dc;
    HIP_CHECK(hipMalloc(&da, bytes));
    HIP_CHECK(hipMalloc(&db, bytes));
    HIP_CHECK(hipMalloc(&dc, bytes));
    HIP_CHECK(hipMemcpy(da, a, bytes, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db, b, bytes, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemset(dc, 0xff, bytes));
    const int threads = 256;
    long blocks = (n + threads - 1) / threads;
    hipLaunchKernelGGL(vector_add, dim3((unsigned)blocks), dim3(threads), 0, 0, da, db, dc, n);
    LAUNCH_CHECK();
    HIP_CHECK(hipMemcpy(c, dc, bytes, hipMemcpyDeviceToHost));
    int failures = 0;
    for (long i = 0; i < n; i++) {
        float want = a[i] + b[i];
        if (c[i] != want) {
            report_mismatch(&failures, "c", i, c[i], want);
        }
    }
    printf("vector_add: %ld elements\n", n);
    print_digest(digest_bytes(DIGEST_START, c, bytes));
    HIP_CHECK(hipFree(da));
    HIP_CHECK(hipFree(db));
    HIP_CHECK(hipFree(dc));
    free(a);
    free(b);
    free(c);
    return verdict(failures);
}
