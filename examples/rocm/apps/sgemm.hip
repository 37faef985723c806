// Single-precision matrix multiply C = A * B (A is M x K, B is K x N, all row-major)
// with 16 x 16 thread blocks that stage 16 x 16 tiles of A and B in LDS: every block
// computes one tile of C, looping over K a tile at a time. The entries are small
// integers, so every partial sum is exact in float and the result equals the host's
// in any summation order.
//
// argv[1..3]: M N K (default 2048 1024 1024), each a multiple of 16.
#include "apps.h"

#define TILE 16

__global__ void sgemm(const float *a, const float *b, float *c, int m, int n, int k) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        a_tile[threadIdx.y][threadIdx.x] = a[(long)row * k + t + threadIdx.x];
        b_tile[threadIdx.y][threadIdx.x] = b[(long)(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int i = 0; i < TILE; i++) {
            sum += a_tile[threadIdx.y][i] * b_tile[i][threadIdx.x];
        }
        __syncthreads();
    }
    c[(long)row * n + col] = sum;
}

int main(int argc, char **argv) {
    const int m = argc > 3 ? atoi(argv[1]) : 2048;
    const int n = argc > 3 ? atoi(argv[2]) : 1024;
    const int k = argc > 3 ? atoi(argv[3]) : 1024;
    if (m <= 0 || n <= 0 || k <= 0 || m % TILE || n % TILE || k % TILE) {
        fprintf(stderr, "usage: %s [M N K, multiples of %d]\n", argv[0], TILE);
        return 2;
    }
    const size_t a_count = (size_t)m * k, b_count = (size_t)k * n, c_count = (size_t)m * n;
    float *a = (float *)malloc(a_count * sizeof(float));
    float *b = (float *)malloc(b_count * sizeof(float));
    float *c = (float *)malloc(c_count * sizeof(float));
    float *want = (float *)calloc(c_count, sizeof(float));
    if (!a || !b || !c || !want) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    // Entries in -2..2: a product is at most 4 and a sum at most 4 K, exact in float
    // (below 2^24) for any K this program can hold.
    for (size_t i = 0; i < a_count; i++) a[i] = (float)((int)(mix32(i, 1) & 3) - 1);
    for (size_t i = 0; i < b_count; i++) b[i] = (float)((int)(mix32(i, 2) & 3) - 2);

    float *da, *db, *dc;
    HIP_CHECK(hipMalloc(&da, a_count * sizeof(float)));
    HIP_CHECK(hipMalloc(&db, b_count * sizeof(float)));
    HIP_CHECK(hipMalloc(&dc, c_count * sizeof(float)));
    HIP_CHECK(hipMemcpy(da, a, a_count * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db, b, b_count * sizeof(float), hipMemcpyHostToDevice));
    hipLaunchKernelGGL(sgemm, dim3(n / TILE, m / TILE), dim3(TILE, TILE), 0, 0, da, db, dc, m, n, k);
    LAUNCH_CHECK();
    HIP_CHECK(hipMemcpy(c, dc, c_count * sizeof(float), hipMemcpyDeviceToHost));

    // The host product, row by row in i-k-j order (the inner loop vectorizes).
    for (int i = 0; i < m; i++) {
        float *out = want + (size_t)i * n;
        for (int p = 0; p < k; p++) {
            const float x = a[(size_t)i * k + p];
            const float *row = b + (size_t)p * n;
            for (int j = 0; j < n; j++) out[j] += x * row[j];
        }
    }
    int failures = 0;
    for (size_t i = 0; i < c_count; i++) {
        if (c[i] != want[i]) report_mismatch(&failures, "c", (long)i, c[i], want[i]);
    }
    printf("sgemm: [%d x %d] * [%d x %d], %d x %d tiles in LDS\n", m, k, k, n, TILE, TILE);
    print_digest(digest_bytes(DIGEST_START, c, c_count * sizeof(float)));
    HIP_CHECK(hipFree(da));
    HIP_CHECK(hipFree(db));
    HIP_CHECK(hipFree(dc));
    free(a);
    free(b);
    free(c);
    free(want);
    return verdict(failures);
}
