// Transposes a ROWS x COLS float matrix (argv[1] and argv[2], default 300 x 200)
// through 32 x 32 tiles in LDS (padded by one column against bank conflicts); sizes
// that are not multiples of the tile exercise the edge checks.
#include "check.h"

#define TILE 32
#define ROWS_PER_PASS 8

__global__ void transpose(const float *in, float *out, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
        if (x < rows && y + j < cols) {
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

int main(int argc, char **argv) {
    const int rows = argc > 2 ? atoi(argv[1]) : 300, cols = argc > 2 ? atoi(argv[2]) : 200;
    if (rows <= 0 || cols <= 0 || (long)rows * cols > 1L << 28) {
        fprintf(stderr, "usage: %s [ROWS COLS]\n", argv[0]);
        return 2;
    }
    size_t bytes = (size_t)rows * cols * sizeof(float);
    float *in = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            in[r * cols + c] = (float)(r * 1000 + c);
        }
    }
    float *din, *dout;
    HIP_CHECK(hipMalloc(&din, bytes));
    HIP_CHECK(hipMalloc(&dout, bytes));
    HIP_CHECK(hipMemcpy(din, in, bytes, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemset(dout, 0, bytes));
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    hipLaunchKernelGGL(transpose, grid, dim3(TILE, ROWS_PER_PASS), 0, 0, din, dout, rows, cols);
    LAUNCH_CHECK();
    HIP_CHECK(hipMemcpy(out, dout, bytes, hipMemcpyDeviceToHost));
    int failures = 0;
    for (int c = 0; c < cols; c++) {
        for (int r = 0; r < rows; r++) {
            float want = in[r * cols + c];
            if (out[c * rows + r] != want) {
                report_mismatch(&failures, "out", (long)c * rows + r, out[c * rows + r], want);
            }
        }
    }
    printf("transpose: %d x %d\n", rows, cols);
    print_digest(digest_bytes(DIGEST_START, out, bytes));
    HIP_CHECK(hipFree(din));
    HIP_CHECK(hipFree(dout));
    free(in);
    free(out);
    return verdict(failures);
}
