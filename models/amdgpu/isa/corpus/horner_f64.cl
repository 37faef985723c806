// horner_f64: out[i] = c0 + x*(c1 + x*(c2 + x*(c3 + x*c4))) in f64, each step a fused
// multiply-add; values with |x| > 4 are replaced by the polynomial at 4 * sign(x).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define BLOCK 64u

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void horner_f64(__global const double *x, __global double *out, __constant double *coeff) {
    uint i = __builtin_amdgcn_workgroup_id_x() * BLOCK + __builtin_amdgcn_workitem_id_x();
    double v = x[i];
    if (v > 4.0)
        v = 4.0;
    else if (v < -4.0)
        v = -4.0;
    double acc = coeff[4];
    acc = __builtin_fma(acc, v, coeff[3]);
    acc = __builtin_fma(acc, v, coeff[2]);
    acc = __builtin_fma(acc, v, coeff[1]);
    acc = __builtin_fma(acc, v, coeff[0]);
    out[i] = acc;
}
