// Matrix-instruction benchmark for `dojo bench gemm`: C = A x B (SIZE x SIZE x SIZE,
// fp32 accumulate) with one MFMA form chosen at build time. The host writes A, B and
// the block scales into the globals below before the run and checks C after it.
//
// Layout: A is row-major (SIZE x SIZE), B is stored transposed (row n holds column n
// of B), so that every lane loads its k-run of one row of A and one column of B as
// contiguous bytes. C is row-major fp32. A work-group of 256 work-items (4 waves)
// computes a 64 x 64 tile of C; each wave a 32 x 32 quarter as 2 x 2 blocks of 16 x 16.
//
// MFMA lane layout of a 16 x 16 x KSTEP block (CDNA3/CDNA4 ISA): lane l holds row l % 16
// of A (column l % 16 of B) for the k-run starting at (l / 16) * KSTEP / 4, and rows
// 4 * (l / 16) .. + 3 of column l % 16 of the result.
//
// FORM: 1 = v_mfma_scale_f32_16x16x128_f8f6f4 (gfx950, fp8 E4M3 with E8M0 block
//           scales per 32 k-elements, one per row of A and column of B)
//       2 = v_mfma_f32_16x16x32_fp8_fp8 (gfx942 FNUZ, gfx950 OCP)
//       3 = v_mfma_f32_16x16x16f16, 4 = v_mfma_f32_16x16x16bf16_1k
//       5 = v_mfma_f32_16x16x32_f16, 6 = v_mfma_f32_16x16x32_bf16 (gfx950)
#include <stdio.h>

#ifndef SIZE
#define SIZE 1024
#endif
#ifndef FORM
#define FORM 1
#endif

#if FORM == 1
#define KSTEP 128
#define ELEM 1
#elif FORM == 2
#define KSTEP 32
#define ELEM 1
#elif FORM == 3 || FORM == 4
#define KSTEP 16
#define ELEM 2
#else
#define KSTEP 32
#define ELEM 2
#endif

// Bytes of A (or B) one lane feeds one MFMA: KSTEP / 4 elements.
#define LANE_BYTES (KSTEP / 4 * ELEM)
#define BLOCKS (SIZE / 32)

typedef float v4f __attribute__((ext_vector_type(4)));
typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v2i __attribute__((ext_vector_type(2)));
typedef _Float16 v4h __attribute__((ext_vector_type(4)));
typedef _Float16 v8h __attribute__((ext_vector_type(8)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef __bf16 v8bf __attribute__((ext_vector_type(8)));

// Filled by the host (`dojo bench gemm`) before the run and read back after it; exported
// (protected visibility), so that link-time optimization keeps them as they are.
#define HOST_VISIBLE __attribute__((visibility("protected"), aligned(256)))
HOST_VISIBLE unsigned char dojo_gemm_a[SIZE * SIZE * ELEM];
HOST_VISIBLE unsigned char dojo_gemm_bt[SIZE * SIZE * ELEM];
HOST_VISIBLE float dojo_gemm_c[SIZE * SIZE];
HOST_VISIBLE unsigned char dojo_gemm_scale_a[SIZE * BLOCKS];
HOST_VISIBLE unsigned char dojo_gemm_scale_b[SIZE * BLOCKS];

typedef union {
  unsigned char bytes[LANE_BYTES];
  v4i q[LANE_BYTES / 16 > 0 ? LANE_BYTES / 16 : 1];
  v2i d;
#if LANE_BYTES == 32
  v8i v8;
#endif
#if FORM == 3
  v4h h4;
#endif
#if FORM == 4
  v4s s4;
#endif
#if FORM == 5
  v8h h8;
#endif
#if FORM == 6
  v8bf b8;
#endif
} frag;

static inline void load(frag *f, const unsigned char *p) {
#if LANE_BYTES >= 16
  for (int i = 0; i < LANE_BYTES / 16; i++) f->q[i] = ((const v4i *)p)[i];
#else
  f->d = *(const v2i *)p;
#endif
}

static inline v4f mfma(const frag *a, const frag *b, v4f c, int sa, int sb) {
#if FORM == 1
  return __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a->v8, b->v8, c, 0, 0, 0, sa, 0, sb);
#elif FORM == 2
  (void)sa; (void)sb;
  return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(*(const long *)a->bytes, *(const long *)b->bytes, c, 0, 0, 0);
#elif FORM == 3
  (void)sa; (void)sb;
  return __builtin_amdgcn_mfma_f32_16x16x16f16(a->h4, b->h4, c, 0, 0, 0);
#elif FORM == 4
  (void)sa; (void)sb;
  return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a->s4, b->s4, c, 0, 0, 0);
#elif FORM == 5
  (void)sa; (void)sb;
  return __builtin_amdgcn_mfma_f32_16x16x32_f16(a->h8, b->h8, c, 0, 0, 0);
#else
  (void)sa; (void)sb;
  return __builtin_amdgcn_mfma_f32_16x16x32_bf16(a->b8, b->b8, c, 0, 0, 0);
#endif
}

int main(void) {
  unsigned lane = __builtin_amdgcn_workitem_id_x() & 63;
  unsigned wave = __builtin_amdgcn_workitem_id_x() / 64;
  unsigned group = __builtin_amdgcn_workgroup_id_x();
  unsigned tiles = SIZE / 64;
  unsigned row0 = (group / tiles) * 64 + (wave / 2) * 32;
  unsigned col0 = (group % tiles) * 64 + (wave % 2) * 32;
  unsigned i = lane % 16, g = lane / 16;
  v4f acc[2][2] = {{0}};
  for (unsigned k0 = 0; k0 < SIZE; k0 += KSTEP) {
    unsigned k = k0 + g * (KSTEP / 4);
    frag a[2], b[2];
    int sa[2] = {0, 0}, sb[2] = {0, 0};
    for (int r = 0; r < 2; r++) {
      unsigned row = row0 + 16 * r + i, col = col0 + 16 * r + i;
      load(&a[r], dojo_gemm_a + ((unsigned long)row * SIZE + k) * ELEM);
      load(&b[r], dojo_gemm_bt + ((unsigned long)col * SIZE + k) * ELEM);
#if FORM == 1
      sa[r] = dojo_gemm_scale_a[row * BLOCKS + k / 32];
      sb[r] = dojo_gemm_scale_b[col * BLOCKS + k / 32];
#endif
    }
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 2; c++) acc[r][c] = mfma(&a[r], &b[c], acc[r][c], sa[r], sb[c]);
  }
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 2; c++)
      for (int e = 0; e < 4; e++)
        dojo_gemm_c[(unsigned long)(row0 + 16 * r + 4 * g + e) * SIZE + col0 + 16 * c + i] = acc[r][c][e];
  return 0;
}
