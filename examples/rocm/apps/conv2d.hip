// 2D convolution of a W x H image with a 5 x 5 mask in constant memory, zero outside
// the image: 16 x 16 thread blocks stage their tile and its 2-pixel halo (20 x 20) in
// LDS, then each thread computes one output pixel from LDS. Pixels and mask are small
// integers, so every sum is exact in float and equals the host's.
//
// argv[1..2]: W H (default 2048 2048).
#include "apps.h"

#define TILE 16
#define RADIUS 2
#define MASK (2 * RADIUS + 1)
#define HALO (TILE + 2 * RADIUS)

__constant__ float mask[MASK * MASK];

__global__ void convolve(const float *in, float *out, int width, int height) {
    __shared__ float tile[HALO][HALO];
    const int x0 = blockIdx.x * TILE - RADIUS, y0 = blockIdx.y * TILE - RADIUS;
    for (int i = threadIdx.y * TILE + threadIdx.x; i < HALO * HALO; i += TILE * TILE) {
        const int x = x0 + i % HALO, y = y0 + i / HALO;
        tile[i / HALO][i % HALO] = x >= 0 && x < width && y >= 0 && y < height ? in[(long)y * width + x] : 0.0f;
    }
    __syncthreads();
    const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    if (x < width && y < height) {
        float sum = 0.0f;
        for (int dy = 0; dy < MASK; dy++) {
            for (int dx = 0; dx < MASK; dx++) {
                sum += mask[dy * MASK + dx] * tile[threadIdx.y + dy][threadIdx.x + dx];
            }
        }
        out[(long)y * width + x] = sum;
    }
}

int main(int argc, char **argv) {
    const int width = argc > 2 ? atoi(argv[1]) : 2048, height = argc > 2 ? atoi(argv[2]) : 2048;
    if (width <= 0 || height <= 0 || (long)width * height > 1L << 28) {
        fprintf(stderr, "usage: %s [W H]\n", argv[0]);
        return 2;
    }
    const size_t count = (size_t)width * height, bytes = count * sizeof(float);
    float *in = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    if (!in || !out) {
        fprintf(stderr, "out of host memory\n");
        return 2;
    }
    for (size_t i = 0; i < count; i++) in[i] = (float)(mix32(i, 3) & 15);
    float host_mask[MASK * MASK];
    for (int i = 0; i < MASK * MASK; i++) host_mask[i] = (float)((int)(mix32(i, 4) % 5) - 2);

    float *din, *dout;
    HIP_CHECK(hipMalloc(&din, bytes));
    HIP_CHECK(hipMalloc(&dout, bytes));
    HIP_CHECK(hipMemcpy(din, in, bytes, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(mask), host_mask, sizeof host_mask));
    dim3 grid((width + TILE - 1) / TILE, (height + TILE - 1) / TILE);
    hipLaunchKernelGGL(convolve, grid, dim3(TILE, TILE), 0, 0, din, dout, width, height);
    LAUNCH_CHECK();
    HIP_CHECK(hipMemcpy(out, dout, bytes, hipMemcpyDeviceToHost));

    int failures = 0;
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            float want = 0.0f;
            for (int dy = -RADIUS; dy <= RADIUS; dy++) {
                for (int dx = -RADIUS; dx <= RADIUS; dx++) {
                    const int sx = x + dx, sy = y + dy;
                    if (sx >= 0 && sx < width && sy >= 0 && sy < height) {
                        want += host_mask[(dy + RADIUS) * MASK + dx + RADIUS] * in[(size_t)sy * width + sx];
                    }
                }
            }
            const size_t i = (size_t)y * width + x;
            if (out[i] != want) report_mismatch(&failures, "out", (long)i, out[i], want);
        }
    }
    printf("conv2d: %d x %d image, %d x %d mask\n", width, height, MASK, MASK);
    print_digest(digest_bytes(DIGEST_START, out, bytes));
    HIP_CHECK(hipFree(din));
    HIP_CHECK(hipFree(dout));
    free(in);
    free(out);
    return verdict(failures);
}
