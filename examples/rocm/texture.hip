// Texture objects on a 2D hipArray (hipMallocArray, hipMemcpy2DToArray, which ROCclr
// performs with its image blit kernel): tex2D<float> with point and linear filtering
// under the wrap, clamp, mirror and border address modes, normalized and unnormalized
// coordinates; an RGBA8 array read as normalized floats; tex1Dfetch on linear memory.
// Every fetch is checked against a host computation of the same sampling rule.
#include <math.h>

#include "check.h"

#define W 16
#define H 8
#define POINTS 256

__global__ void sample2d(hipTextureObject_t tex, const float2 *coords, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(tex, coords[i].x, coords[i].y);
}

__global__ void sample_rgba(hipTextureObject_t tex, float4 *out) {
    int x = threadIdx.x, y = blockIdx.x;
    out[y * W + x] = tex2D<float4>(tex, x + 0.5f, y + 0.5f);
}

__global__ void fetch1d(hipTextureObject_t tex, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, i) * 2.0f;
}

// The texel an address mode selects for index i of an axis of n texels; -1 is the
// border.
static int address(hipTextureAddressMode mode, int i, int n) {
    switch (mode) {
    case hipAddressModeWrap: return ((i % n) + n) % n;
    case hipAddressModeMirror: {
        int m = ((i % (2 * n)) + 2 * n) % (2 * n);
        return m < n ? m : 2 * n - 1 - m;
    }
    case hipAddressModeClamp: return i < 0 ? 0 : i >= n ? n - 1 : i;
    default: return i < 0 || i >= n ? -1 : i;
    }
}

static float texel(const float *img, hipTextureAddressMode mode, int x, int y) {
    int ax = address(mode, x, W), ay = address(mode, y, H);
    return ax < 0 || ay < 0 ? 0.0f : img[ay * W + ax];
}

// The host's sample at (x, y) in texels: point takes floor(x), linear blends the four
// texels around (x - 0.5, y - 0.5).
static float reference(const float *img, hipTextureAddressMode mode, bool linear, float x, float y) {
    if (!linear) return texel(img, mode, (int)floorf(x), (int)floorf(y));
    float xs = x - 0.5f, ys = y - 0.5f;
    float x0 = floorf(xs), y0 = floorf(ys);
    float a = xs - x0, b = ys - y0;
    int i = (int)x0, j = (int)y0;
    return (1 - a) * (1 - b) * texel(img, mode, i, j) + a * (1 - b) * texel(img, mode, i + 1, j) +
           (1 - a) * b * texel(img, mode, i, j + 1) + a * b * texel(img, mode, i + 1, j + 1);
}

int main() {
    int failures = 0;
    // A W x H float image with distinct values.
    static float img[W * H];
    for (int i = 0; i < W * H; i++) img[i] = (float)((i * 37) % 101) - 50.0f;
    hipChannelFormatDesc fdesc = hipCreateChannelDesc<float>();
    hipArray_t arr;
    HIP_CHECK(hipMallocArray(&arr, &fdesc, W, H));
    HIP_CHECK(hipMemcpy2DToArray(arr, 0, 0, img, W * sizeof(float), W * sizeof(float), H, hipMemcpyHostToDevice));

    // Sample points from outside the left/top edge to past the right/bottom one.
    static float2 coords[POINTS];
    for (int i = 0; i < POINTS; i++) coords[i] = make_float2(-1.25f + 0.0173f * i, 2.1f - 0.0151f * i);
    float2 *dcoords;
    float *dout;
    HIP_CHECK(hipMalloc(&dcoords, sizeof(coords)));
    HIP_CHECK(hipMalloc(&dout, POINTS * sizeof(float)));
    HIP_CHECK(hipMemcpy(dcoords, coords, sizeof(coords), hipMemcpyHostToDevice));

    const hipTextureAddressMode modes[] = {hipAddressModeWrap, hipAddressModeClamp, hipAddressModeMirror, hipAddressModeBorder};
    const char *mode_names[] = {"wrap", "clamp", "mirror", "border"};
    int cases = 0;
    for (int m = 0; m < 4; m++) {
        for (int linear = 0; linear < 2; linear++) {
            for (int normalized = 0; normalized < 2; normalized++) {
                // Wrap and mirror exist for normalized coordinates only.
                if (!normalized && (modes[m] == hipAddressModeWrap || modes[m] == hipAddressModeMirror)) continue;
                hipResourceDesc res = {};
                res.resType = hipResourceTypeArray;
                res.res.array.array = arr;
                hipTextureDesc td = {};
                td.addressMode[0] = td.addressMode[1] = modes[m];
                td.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
                td.readMode = hipReadModeElementType;
                td.normalizedCoords = normalized;
                hipTextureObject_t tex;
                HIP_CHECK(hipCreateTextureObject(&tex, &res, &td, nullptr));
                // Unnormalized runs sample the same texel positions.
                static float2 scaled[POINTS];
                for (int i = 0; i < POINTS; i++) {
                    scaled[i] = normalized ? coords[i] : make_float2(coords[i].x * W, coords[i].y * H);
                }
                HIP_CHECK(hipMemcpy(dcoords, scaled, sizeof(scaled), hipMemcpyHostToDevice));
                hipLaunchKernelGGL(sample2d, dim3(POINTS / 64), dim3(64), 0, 0, tex, dcoords, dout, POINTS);
                LAUNCH_CHECK();
                static float got[POINTS];
                HIP_CHECK(hipMemcpy(got, dout, sizeof(got), hipMemcpyDeviceToHost));
                for (int i = 0; i < POINTS; i++) {
                    float want = reference(img, modes[m], linear, coords[i].x * W, coords[i].y * H);
                    if (fabsf(got[i] - want) > 1e-4f * fmaxf(1.0f, fabsf(want))) {
                        char what[64];
                        snprintf(what, sizeof what, "%s %s %s", mode_names[m], linear ? "linear" : "point",
                                 normalized ? "normalized" : "unnormalized");
                        report_mismatch(&failures, what, i, got[i], want);
                    }
                }
                HIP_CHECK(hipDestroyTextureObject(tex));
                cases++;
            }
        }
    }
    printf("texture: %d x %d float array, %d sampler configurations x %d points\n", W, H, cases, POINTS);

    // An RGBA8 array read as normalized floats.
    static uchar4 rgba[W * H];
    for (int i = 0; i < W * H; i++) rgba[i] = make_uchar4(i, 255 - i, (i * 7) & 255, 128);
    // Spelled out: Debian's HIP 5.2.3 hipCreateChannelDesc<uchar4>() says "signed", which
    // the runtime then maps to SNORM (hardware and simulator alike).
    hipChannelFormatDesc cdesc = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
    hipArray_t carr;
    HIP_CHECK(hipMallocArray(&carr, &cdesc, W, H));
    HIP_CHECK(hipMemcpy2DToArray(carr, 0, 0, rgba, W * sizeof(uchar4), W * sizeof(uchar4), H, hipMemcpyHostToDevice));
    hipResourceDesc cres = {};
    cres.resType = hipResourceTypeArray;
    cres.res.array.array = carr;
    hipTextureDesc ctd = {};
    ctd.addressMode[0] = ctd.addressMode[1] = hipAddressModeClamp;
    ctd.filterMode = hipFilterModePoint;
    ctd.readMode = hipReadModeNormalizedFloat;
    hipTextureObject_t ctex;
    HIP_CHECK(hipCreateTextureObject(&ctex, &cres, &ctd, nullptr));
    float4 *dcol;
    HIP_CHECK(hipMalloc(&dcol, W * H * sizeof(float4)));
    hipLaunchKernelGGL(sample_rgba, dim3(H), dim3(W), 0, 0, ctex, dcol);
    LAUNCH_CHECK();
    static float4 col[W * H];
    HIP_CHECK(hipMemcpy(col, dcol, sizeof(col), hipMemcpyDeviceToHost));
    for (int i = 0; i < W * H; i++) {
        float want[4] = {rgba[i].x / 255.0f, rgba[i].y / 255.0f, rgba[i].z / 255.0f, rgba[i].w / 255.0f};
        float got[4] = {col[i].x, col[i].y, col[i].z, col[i].w};
        for (int c = 0; c < 4; c++) {
            if (fabsf(got[c] - want[c]) > 1e-6f) report_mismatch(&failures, "rgba8 normalized", 4 * i + c, got[c], want[c]);
        }
    }
    printf("texture: %d x %d uchar4 array read as normalized floats\n", W, H);

    // tex1Dfetch on linear device memory.
    const int n = 1000;
    static float lin[n];
    for (int i = 0; i < n; i++) lin[i] = 0.5f * i - 17.0f;
    float *dlin, *dlout;
    HIP_CHECK(hipMalloc(&dlin, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&dlout, n * sizeof(float)));
    HIP_CHECK(hipMemcpy(dlin, lin, sizeof(lin), hipMemcpyHostToDevice));
    hipResourceDesc lres = {};
    lres.resType = hipResourceTypeLinear;
    lres.res.linear.devPtr = dlin;
    lres.res.linear.desc = fdesc;
    lres.res.linear.sizeInBytes = n * sizeof(float);
    hipTextureDesc ltd = {};
    ltd.readMode = hipReadModeElementType;
    hipTextureObject_t ltex;
    HIP_CHECK(hipCreateTextureObject(&ltex, &lres, &ltd, nullptr));
    hipLaunchKernelGGL(fetch1d, dim3((n + 255) / 256), dim3(256), 0, 0, ltex, dlout, n);
    LAUNCH_CHECK();
    static float lout[n];
    HIP_CHECK(hipMemcpy(lout, dlout, sizeof(lout), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        if (lout[i] != 2.0f * lin[i]) report_mismatch(&failures, "tex1Dfetch", i, lout[i], 2.0f * lin[i]);
    }
    printf("texture: tex1Dfetch of %d floats\n", n);

    HIP_CHECK(hipDestroyTextureObject(ctex));
    HIP_CHECK(hipDestroyTextureObject(ltex));
    HIP_CHECK(hipFreeArray(arr));
    HIP_CHECK(hipFreeArray(carr));
    HIP_CHECK(hipFree(dcoords));
    HIP_CHECK(hipFree(dout));
    HIP_CHECK(hipFree(dcol));
    HIP_CHECK(hipFree(dlin));
    HIP_CHECK(hipFree(dlout));
    return verdict(failures);
}
