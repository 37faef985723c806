// fp8_convert: round-trip f32 pairs through packed fp8 (E4M3) and bf8 (E5M2).
// gfx942 uses the FNUZ encodings, gfx950 the OCP ones; the builtins are the same.
//   packed[i]   = fp8(in[2i]) | fp8(in[2i+1]) << 8 | bf8(in[2i]) << 16 | bf8(in[2i+1]) << 24
//   fp8_out[2i+k] = f32(fp8(in[2i+k])),  bf8_out[2i+k] = f32(bf8(in[2i+k]))
#define BLOCK 64u

__attribute__((amdgpu_kernel))
void fp8_convert(const float *in, unsigned *packed, float *fp8_out, float *bf8_out) {
    unsigned i = __builtin_amdgcn_workgroup_id_x() * BLOCK + __builtin_amdgcn_workitem_id_x();
    float lo = in[2u * i];
    float hi = in[2u * i + 1u];
    int fp8 = __builtin_amdgcn_cvt_pk_fp8_f32(lo, hi, 0, 0);
    int both = __builtin_amdgcn_cvt_pk_bf8_f32(lo, hi, fp8, 1);
    packed[i] = (unsigned)both;
    fp8_out[2u * i] = __builtin_amdgcn_cvt_f32_fp8(both, 0);
    fp8_out[2u * i + 1u] = __builtin_amdgcn_cvt_f32_fp8(both, 1);
    bf8_out[2u * i] = __builtin_amdgcn_cvt_f32_bf8(both, 2);
    bf8_out[2u * i + 1u] = __builtin_amdgcn_cvt_f32_bf8(both, 3);
}
