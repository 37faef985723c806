// mfma_gemm: one 64-lane wavefront computes C = A * B for 16x16 row-major f32 matrices
// with four v_mfma_f32_16x16x4f32 steps (K = 16).
//   A operand: lane l holds A[l % 16][k0 + l / 16];  B operand: B[k0 + l / 16][l % 16];
//   result: lane l, element e holds C[4 * (l / 16) + e][l % 16].
#define __global__ __attribute__((global))

typedef float float4_t __attribute__((ext_vector_type(4)));

extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(64, 64)))
void mfma_gemm(const float *a, const float *b, float *c) {
    unsigned lane = __builtin_amdgcn_workitem_id_x();
    unsigned col = lane % 16u;
    unsigned quad = lane / 16u;
    float4_t acc = {0.0f, 0.0f, 0.0f, 0.0f};
    for (unsigned k0 = 0; k0 < 16u; k0 += 4u) {
        float av = a[col * 16u + k0 + quad];
        float bv = b[(k0 + quad) * 16u + col];
        acc = __builtin_amdgcn_mfma_f32_16x16x4f32(av, bv, acc, 0, 0, 0);
    }
    for (unsigned e = 0; e < 4u; ++e)
        c[(4u * quad + e) * 16u + col] = acc[e];
}
