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

// ROUNDS rounds of four independent MFMA chains c0..c3 of `mfma` (a builtin), the A
// operand of chain k being `a + (T)k`, timed into t0..t1, summed into `check`.
#define FOUR_CHAINS(mfma, a, T)                                                          \
  do {                                                                                   \
    t0 = cycles();                                                                       \
    for (int i = 0; i < ROUNDS; i++) {                                                   \
      c0 = mfma((a) + (T)0, a, c0, 0, 0, 0);                                             \
      c1 = mfma((a) + (T)1, a, c1, 0, 0, 0);                                             \
      c2 = mfma((a) + (T)2, a, c2, 0, 0, 0);                                             \
      c3 = mfma((a) + (T)3, a, c3, 0, 0, 0);                                             \
    }                                                                                    \
    check = c0[0] + c1[1] + c2[2] + c3[3];                                               \
    t1 = cycles();                                                                       \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const char *kind = argv[1];
  float x = (float)lane();
  u64 t0 = 0, t1 = 0;
  float check = 0;
  if (kind[0] == 'f' && kind[1] == '3') {
    v16f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
    FOUR_CHAINS(__builtin_amdgcn_mfma_f32_32x32x2f32, x, float);
  } else if (kind[0] == 'f' && kind[1] == '1') {
    v4h a = {(_Float16)x, 1, 2, 3};
    v4f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
    FOUR_CHAINS(__builtin_amdgcn_mfma_f32_16x16x16f16, a, _Float16);
  } else {
#if defined(__gfx942__) || defined(__gfx950__)
    long a = 0x3c3c3c3c3c3c3c3cl + lane();
    v4f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
    FOUR_CHAINS(__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8, a, long);
#else
    return 3; // no fp8 MFMA on this target
#endif
  }
  if (thread_id() == 0)
    printf("RESULT cycles_per_mfma %.2f %d\n", (double)(t1 - t0) / (4 * ROUNDS), (int)check);
  return 0;
}
