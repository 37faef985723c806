// Surface objects: kernels write a 2D float array and a 2D int2 array with surf2Dwrite
// (image_store), other kernels read them back with surf2Dread (image_load), and the host
// copies the arrays out with hipMemcpy2DFromArray (ROCclr's image-to-buffer blit) and
// a sub-rectangle in with hipMemcpy2DToArray. Every value is checked against the host's.
#include "check.h"

#define W 40
#define H 24

__device__ float value(int x, int y) { return 0.25f * x - 3.0f * y + 1.0f; }

__global__ void write_float(hipSurfaceObject_t s) {
    int x = threadIdx.x, y = blockIdx.x;
    surf2Dwrite(value(x, y), s, x * (int)sizeof(float), y);
}

// Reads the float surface at (x, y) and its right neighbour (clamped), writing the sum.
__global__ void read_float(hipSurfaceObject_t s, float *out) {
    int x = threadIdx.x, y = blockIdx.x;
    float a, b;
    surf2Dread(&a, s, x * (int)sizeof(float), y);
    surf2Dread(&b, s, (x + 1 < W ? x + 1 : x) * (int)sizeof(float), y);
    out[y * W + x] = a + b;
}

__global__ void write_int2(hipSurfaceObject_t s) {
    int x = threadIdx.x, y = blockIdx.x;
    surf2Dwrite(make_int2(x * 1000 + y, -x - y), s, x * (int)sizeof(int2), y);
}

__global__ void read_int2(hipSurfaceObject_t s, int2 *out) {
    int x = threadIdx.x, y = blockIdx.x;
    int2 v;
    surf2Dread(&v, s, x * (int)sizeof(int2), y);
    out[y * W + x] = make_int2(v.y, v.x);
}

static float host_value(int x, int y) { return 0.25f * x - 3.0f * y + 1.0f; }

static hipSurfaceObject_t surface_of(hipArray_t arr) {
    hipResourceDesc res = {};
    res.resType = hipResourceTypeArray;
    res.res.array.array = arr;
    hipSurfaceObject_t s;
    HIP_CHECK(hipCreateSurfaceObject(&s, &res));
    return s;
}

int main() {
    int failures = 0;
    hipChannelFormatDesc fdesc = hipCreateChannelDesc<float>();
    hipArray_t farr;
    // Debian's HIP 5.2.3 refuses hipArraySurfaceLoadStore (hipErrorNotSupported); its arrays
    // take surface access without the flag.
    HIP_CHECK(hipMallocArray(&farr, &fdesc, W, H));
    hipSurfaceObject_t fs = surface_of(farr);
    float *dsum;
    HIP_CHECK(hipMalloc(&dsum, W * H * sizeof(float)));
    hipLaunchKernelGGL(write_float, dim3(H), dim3(W), 0, 0, fs);
    LAUNCH_CHECK();
    hipLaunchKernelGGL(read_float, dim3(H), dim3(W), 0, 0, fs, dsum);
    LAUNCH_CHECK();
    static float sum[W * H], back[W * H];
    HIP_CHECK(hipMemcpy(sum, dsum, sizeof(sum), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy2DFromArray(back, W * sizeof(float), farr, 0, 0, W * sizeof(float), H, hipMemcpyDeviceToHost));
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            float want = host_value(x, y) + host_value(x + 1 < W ? x + 1 : x, y);
            if (sum[y * W + x] != want) report_mismatch(&failures, "surf2Dread sum", y * W + x, sum[y * W + x], want);
            if (back[y * W + x] != host_value(x, y)) {
                report_mismatch(&failures, "hipMemcpy2DFromArray", y * W + x, back[y * W + x], host_value(x, y));
            }
        }
    }
    printf("surface: %d x %d float written and read by kernels, copied out\n", W, H);

    // A sub-rectangle copied in from the host, then read back through the surface.
    const int rx = 5, ry = 3, rw = 17, rh = 9;
    static float patch[rw * rh];
    for (int i = 0; i < rw * rh; i++) patch[i] = 1000.0f + i;
    HIP_CHECK(hipMemcpy2DToArray(farr, rx * sizeof(float), ry, patch, rw * sizeof(float), rw * sizeof(float), rh, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy2DFromArray(back, W * sizeof(float), farr, 0, 0, W * sizeof(float), H, hipMemcpyDeviceToHost));
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            bool inside = x >= rx && x < rx + rw && y >= ry && y < ry + rh;
            float want = inside ? patch[(y - ry) * rw + (x - rx)] : host_value(x, y);
            if (back[y * W + x] != want) report_mismatch(&failures, "sub-rectangle copy", y * W + x, back[y * W + x], want);
        }
    }
    printf("surface: a %d x %d rectangle at (%d, %d) copied in\n", rw, rh, rx, ry);

    hipChannelFormatDesc idesc = hipCreateChannelDesc(32, 32, 0, 0, hipChannelFormatKindSigned);
    hipArray_t iarr;
    HIP_CHECK(hipMallocArray(&iarr, &idesc, W, H));
    hipSurfaceObject_t is = surface_of(iarr);
    int2 *dswap;
    HIP_CHECK(hipMalloc(&dswap, W * H * sizeof(int2)));
    hipLaunchKernelGGL(write_int2, dim3(H), dim3(W), 0, 0, is);
    LAUNCH_CHECK();
    hipLaunchKernelGGL(read_int2, dim3(H), dim3(W), 0, 0, is, dswap);
    LAUNCH_CHECK();
    static int2 swapped[W * H];
    HIP_CHECK(hipMemcpy(swapped, dswap, sizeof(swapped), hipMemcpyDeviceToHost));
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            int2 v = swapped[y * W + x];
            if (v.x != -x - y || v.y != x * 1000 + y) {
                report_mismatch(&failures, "int2 surface .x", y * W + x, v.x, -x - y);
                report_mismatch(&failures, "int2 surface .y", y * W + x, v.y, x * 1000 + y);
            }
        }
    }
    printf("surface: %d x %d int2 written and read by kernels\n", W, H);

    HIP_CHECK(hipDestroySurfaceObject(fs));
    HIP_CHECK(hipDestroySurfaceObject(is));
    HIP_CHECK(hipFreeArray(farr));
    HIP_CHECK(hipFreeArray(iarr));
    HIP_CHECK(hipFree(dsum));
    HIP_CHECK(hipFree(dswap));
    return verdict(failures);
}
