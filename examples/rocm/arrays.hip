// 3D and layered hipArrays: hipMemcpy3D into a 3D array (ROCclr's buffer-to-image blit
// on a 3D image, which ROCr tiles in a thick swizzle mode), tex3D with point and
// trilinear filtering, surf3Dwrite and hipMemcpy3D back out; a layered 2D array read
// with tex2DLayered. Every value is checked against the host's.
#include <math.h>

#include "check.h"

#define W 12
#define H 10
#define D 6
#define POINTS 320
#define LAYERS 4

__global__ void sample3d(hipTextureObject_t tex, const float4 *coords, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(tex, coords[i].x, coords[i].y, coords[i].z);
}

// Doubles every voxel through a surface.
__global__ void scale3d(hipSurfaceObject_t s) {
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    float v;
    surf3Dread(&v, s, x * (int)sizeof(float), y, z);
    surf3Dwrite(2.0f * v, s, x * (int)sizeof(float), y, z);
}

__global__ void sample_layers(hipTextureObject_t tex, float *out) {
    int x = threadIdx.x, y = blockIdx.x, layer = blockIdx.y;
    out[(layer * H + y) * W + x] = tex2DLayered<float>(tex, x + 0.5f, y + 0.5f, layer);
}

static float voxel(const float *v, int x, int y, int z) {
    x = x < 0 ? 0 : x >= W ? W - 1 : x;
    y = y < 0 ? 0 : y >= H ? H - 1 : y;
    z = z < 0 ? 0 : z >= D ? D - 1 : z;
    return v[(z * H + y) * W + x];
}

// The host's clamp-to-edge sample at (x, y, z) in texels: point takes the floors,
// linear blends the eight voxels around (x, y, z) - 0.5.
static float reference(const float *v, bool linear, float x, float y, float z) {
    if (!linear) return voxel(v, (int)floorf(x), (int)floorf(y), (int)floorf(z));
    float xs = x - 0.5f, ys = y - 0.5f, zs = z - 0.5f;
    float x0 = floorf(xs), y0 = floorf(ys), z0 = floorf(zs);
    float a = xs - x0, b = ys - y0, c = zs - z0;
    int i = (int)x0, j = (int)y0, k = (int)z0;
    float r = 0;
    for (int dz = 0; dz < 2; dz++)
        for (int dy = 0; dy < 2; dy++)
            for (int dx = 0; dx < 2; dx++)
                r += (dx ? a : 1 - a) * (dy ? b : 1 - b) * (dz ? c : 1 - c) * voxel(v, i + dx, j + dy, k + dz);
    return r;
}

static hipTextureObject_t texture_of(hipArray_t arr, bool linear) {
    hipResourceDesc res = {};
    res.resType = hipResourceTypeArray;
    res.res.array.array = arr;
    hipTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = hipAddressModeClamp;
    td.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
    td.readMode = hipReadModeElementType;
    hipTextureObject_t tex;
    HIP_CHECK(hipCreateTextureObject(&tex, &res, &td, nullptr));
    return tex;
}

static void copy3d(hipArray_t arr, float *host, hipMemcpyKind kind) {
    hipMemcpy3DParms p = {};
    if (kind == hipMemcpyHostToDevice) {
        p.srcPtr = make_hipPitchedPtr(host, W * sizeof(float), W, H);
        p.dstArray = arr;
    } else {
        p.srcArray = arr;
        p.dstPtr = make_hipPitchedPtr(host, W * sizeof(float), W, H);
    }
    p.extent = make_hipExtent(W, H, D);
    p.kind = kind;
    HIP_CHECK(hipMemcpy3D(&p));
}

int main() {
    int failures = 0;
    static float vol[W * H * D];
    for (int i = 0; i < W * H * D; i++) vol[i] = (float)((i * 53) % 97) * 0.5f - 20.0f;
    hipChannelFormatDesc fdesc = hipCreateChannelDesc<float>();
    hipArray_t arr;
    HIP_CHECK(hipMalloc3DArray(&arr, &fdesc, make_hipExtent(W, H, D), 0));
    copy3d(arr, vol, hipMemcpyHostToDevice);

    static float4 coords[POINTS];
    for (int i = 0; i < POINTS; i++) {
        coords[i] = make_float4(-0.7f + 0.041f * i, 10.9f - 0.0349f * i, 0.021f * i - 0.4f, 0);
    }
    float4 *dcoords;
    float *dout;
    HIP_CHECK(hipMalloc(&dcoords, sizeof(coords)));
    HIP_CHECK(hipMalloc(&dout, POINTS * sizeof(float)));
    HIP_CHECK(hipMemcpy(dcoords, coords, sizeof(coords), hipMemcpyHostToDevice));
    for (int linear = 0; linear < 2; linear++) {
        hipTextureObject_t tex = texture_of(arr, linear);
        hipLaunchKernelGGL(sample3d, dim3(POINTS / 64), dim3(64), 0, 0, tex, dcoords, dout, POINTS);
        LAUNCH_CHECK();
        static float got[POINTS];
        HIP_CHECK(hipMemcpy(got, dout, sizeof(got), hipMemcpyDeviceToHost));
        for (int i = 0; i < POINTS; i++) {
            float want = reference(vol, linear, coords[i].x, coords[i].y, coords[i].z);
            if (fabsf(got[i] - want) > 1e-4f * fmaxf(1.0f, fabsf(want))) {
                report_mismatch(&failures, linear ? "tex3D linear" : "tex3D point", i, got[i], want);
            }
        }
        HIP_CHECK(hipDestroyTextureObject(tex));
    }
    printf("arrays: %d x %d x %d float volume, tex3D point and trilinear at %d points\n", W, H, D, POINTS);

    hipResourceDesc sres = {};
    sres.resType = hipResourceTypeArray;
    sres.res.array.array = arr;
    hipSurfaceObject_t surf;
    HIP_CHECK(hipCreateSurfaceObject(&surf, &sres));
    hipLaunchKernelGGL(scale3d, dim3(H, D), dim3(W), 0, 0, surf);
    LAUNCH_CHECK();
    static float back[W * H * D];
    copy3d(arr, back, hipMemcpyDeviceToHost);
    for (int i = 0; i < W * H * D; i++) {
        if (back[i] != 2.0f * vol[i]) report_mismatch(&failures, "surf3D scale + hipMemcpy3D out", i, back[i], 2.0f * vol[i]);
    }
    printf("arrays: surf3Dread/surf3Dwrite over the volume, hipMemcpy3D back\n");

    // A layered 2D array: layer l holds 100 l + x + W y.
    static float layers[LAYERS * H * W];
    for (int l = 0; l < LAYERS; l++)
        for (int i = 0; i < W * H; i++) layers[l * W * H + i] = 100.0f * l + i;
    hipArray_t larr;
    HIP_CHECK(hipMalloc3DArray(&larr, &fdesc, make_hipExtent(W, H, LAYERS), hipArrayLayered));
    hipMemcpy3DParms p = {};
    p.srcPtr = make_hipPitchedPtr(layers, W * sizeof(float), W, H);
    p.dstArray = larr;
    p.extent = make_hipExtent(W, H, LAYERS);
    p.kind = hipMemcpyHostToDevice;
    HIP_CHECK(hipMemcpy3D(&p));
    hipTextureObject_t ltex = texture_of(larr, false);
    float *dlayers;
    HIP_CHECK(hipMalloc(&dlayers, sizeof(layers)));
    hipLaunchKernelGGL(sample_layers, dim3(H, LAYERS), dim3(W), 0, 0, ltex, dlayers);
    LAUNCH_CHECK();
    static float lout[LAYERS * H * W];
    HIP_CHECK(hipMemcpy(lout, dlayers, sizeof(lout), hipMemcpyDeviceToHost));
    for (int i = 0; i < LAYERS * H * W; i++) {
        if (lout[i] != layers[i]) report_mismatch(&failures, "tex2DLayered", i, lout[i], layers[i]);
    }
    printf("arrays: %d-layer %d x %d array read with tex2DLayered\n", LAYERS, W, H);

    HIP_CHECK(hipDestroySurfaceObject(surf));
    HIP_CHECK(hipDestroyTextureObject(ltex));
    HIP_CHECK(hipFreeArray(arr));
    HIP_CHECK(hipFreeArray(larr));
    HIP_CHECK(hipFree(dcoords));
    HIP_CHECK(hipFree(dout));
    HIP_CHECK(hipFree(dlayers));
    return verdict(failures);
}
