// Image kernels for the real-code corpus (tests/rocm_corpus.rs): HIP texture and surface
// functions of every dimensionality and several element types, so that Debian's hipcc
// (clang 15) emits the gfx90a image instructions as a HIP program does: image_sample
// (1D, 2D, 3D, layered, cube; f32 and a16-free forms), image_load / image_store through
// surfaces with 1, 2 and 4 components, and buffer-format loads for tex1Dfetch. Compiled
// only (no host code runs).
#include <hip/hip_runtime.h>

__global__ void sample_1d(hipTextureObject_t t, float *out) {
    int i = threadIdx.x;
    out[i] = tex1D<float>(t, i * 0.25f);
}

__global__ void sample_2d(hipTextureObject_t t, float4 *out, float s) {
    int x = threadIdx.x, y = blockIdx.x;
    out[y * 64 + x] = tex2D<float4>(t, x * s, y * s);
}

__global__ void sample_2d_int(hipTextureObject_t t, int2 *out) {
    int x = threadIdx.x, y = blockIdx.x;
    out[y * 64 + x] = tex2D<int2>(t, x + 0.5f, y + 0.5f);
}

__global__ void sample_3d(hipTextureObject_t t, float2 *out) {
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    out[(z * 16 + y) * 64 + x] = tex3D<float2>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}

__global__ void sample_layered(hipTextureObject_t t1, hipTextureObject_t t2, float *out) {
    int x = threadIdx.x, layer = blockIdx.x;
    out[layer * 64 + x] = tex1DLayered<float>(t1, x, layer) + tex2DLayered<float>(t2, x, 0.5f, layer);
}

__global__ void sample_cube(hipTextureObject_t t, float4 *out) {
    float a = threadIdx.x * 0.1f - 3.0f;
    out[threadIdx.x] = texCubemap<float4>(t, a, 1.0f, -0.5f);
}

__global__ void fetch_linear(hipTextureObject_t t, float4 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = tex1Dfetch<float4>(t, i);
}

__global__ void surfaces(hipSurfaceObject_t s1, hipSurfaceObject_t s2, hipSurfaceObject_t s3, hipSurfaceObject_t s4) {
    int x = threadIdx.x, y = blockIdx.x;
    float f;
    surf2Dread(&f, s1, x * 4, y);
    surf2Dwrite(f * 2.0f, s1, x * 4, y + 1);
    uchar4 c;
    surf2Dread(&c, s2, x * 4, y);
    surf2Dwrite(make_uchar4(c.w, c.z, c.y, c.x), s2, x * 4, y);
    short2 h;
    surf1Dread(&h, s3, x * 4);
    surf1Dwrite(make_short2(h.y, h.x), s3, x * 4);
    float4 v;
    surf3Dread(&v, s4, x * 16, y, 2);
    surf3Dwrite(make_float4(v.w, v.x, v.y, v.z), s4, x * 16, y, 3);
}

__global__ void layered_surfaces(hipSurfaceObject_t s1, hipSurfaceObject_t s2) {
    int x = threadIdx.x, layer = blockIdx.x;
    int v;
    surf1DLayeredread(&v, s1, x * 4, layer);
    surf1DLayeredwrite(v + 1, s1, x * 4, layer);
    float f;
    surf2DLayeredread(&f, s2, x * 4, 3, layer);
    surf2DLayeredwrite(f - 1.0f, s2, x * 4, 4, layer);
}
