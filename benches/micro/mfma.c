// MFMA throughput: `mfma KIND`. Each wave (one per SIMD: run it with 256 work-items in
// one work-group) issues 256 MFMAs in four independent chains, so its SIMD's matrix core
// never waits for a result (the chains have different inputs, so the compiler cannot
// merge them). KIND: f32_32x32x2, f16_16x16x16, fp8_16x16x32 (gfx942 and
// later). Prints `RESULT cycles_per_mfma <cycles> <checksum>` for wave 0.
#include "common.h"

typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v16f __attribute__((ext_vector_type(16)));
typedef _Float16 v4h __attribute__((ext_vector_type(4)));

#define ROUNDS 64

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const char *kind = argv[1];
  float x = (float)lane();
  u64 t0 = 0, t1 = 0;
  float check = 0;
  if (kind[0] == 'f' && kind[1] == '3') {
    v16f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
    t0 = cycles();
    for (int i = 0; i < ROUNDS; i++) {
      c0 = __builtin_amdgcn_mfma_f32_32x32x2f32(x + 0.0f, x, c0, 0, 0, 0);
      c1 = __builtin_amdgcn_mfma_f32_32x32x2f32(x + 1.0f, x, c1, 0, 0, 0);
      c2 = __builtin_amdgcn_mfma_f32_32x32x2f32(x + 2.0f, x, c2, 0, 0, 0);
      c3 = __builtin_amdgcn_mfma_f32_32x32x2f32(x + 3.0f, x, c3, 0, 0, 0);
    }
    check = c0[0] + c1[1] + c2[2] + c3[3];
    t1 = cycles();
  } else if (kind[0] == 'f' && kind[1] == '1') {
    v4h a = {(_Float16)x, 1, 2, 3};
    v4f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
    t0 = cycles();
    for (int i = 0; i < ROUNDS; i++) {
      c0 = __builtin_amdgcn_mfma_f32_16x16x16f16(a + (_Float16)0, a, c0, 0, 0, 0);
      c1 = __builtin_amdgcn_mfma_f32_16x16x16f16(a + (_Float16)1, a, c1, 0, 0, 0);
      c2 = __builtin_amdgcn_mfma_f32_16x16x16f16(a + (_Float16)2, a, c2, 0, 0, 0);
      c3 = __builtin_amdgcn_mfma_f32_16x16x16f16(a + (_Float16)3, a, c3, 0, 0, 0);
    }
    check = c0[0] + c1[1] + c2[2] + c3[3];
    t1 = cycles();
  } else {
#if defined(__gfx942__) || defined(__gfx950__)
    long a = 0x3c3c3c3c3c3c3c3cl + lane();
    v4f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
    t0 = cycles();
    for (int i = 0; i < ROUNDS; i++) {
      c0 = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a + 0, a, c0, 0, 0, 0);
      c1 = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a + 1, a, c1, 0, 0, 0);
      c2 = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a + 2, a, c2, 0, 0, 0);
      c3 = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a + 3, a, c3, 0, 0, 0);
    }
    check = c0[0] + c1[1] + c2[2] + c3[3];
    t1 = cycles();
#else
    return 3; // no fp8 MFMA on this target
#endif
  }
  if (thread_id() == 0)
    printf("RESULT cycles_per_mfma %.2f %d\n", (double)(t1 - t0) / (4 * ROUNDS), (int)check);
  return 0;
}
