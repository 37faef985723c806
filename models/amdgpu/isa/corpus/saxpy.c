// saxpy: y[i] = a * x[i] + y[i] for i < n (fused multiply-add), 256-lane work-groups.
// Freestanding C for amdgcn-amd-amdhsa; part of the simdojo code object corpus.
#define BLOCK 256u

__attribute__((amdgpu_kernel))
void saxpy(unsigned n, float a, const float *x, float *y) {
    unsigned i = __builtin_amdgcn_workgroup_id_x() * BLOCK + __builtin_amdgcn_workitem_id_x();
    if (i < n)
        y[i] = __builtin_fmaf(a, x[i], y[i]);
}
