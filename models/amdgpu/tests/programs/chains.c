// Dependent chains of f32 and f64 multiply-adds in one wave, timed with s_memtime.
#include <stdio.h>
int main(int argc, char **argv) {
  float x = (float)argc;
  double y = (double)argc;
  unsigned long t0 = __builtin_amdgcn_s_memtime();
  for (int i = 0; i < 4096; i++) x = __builtin_fmaf(x, 0.999f, 0.5f);
  unsigned long t1 = __builtin_amdgcn_s_memtime();
  for (int i = 0; i < 4096; i++) y = __builtin_fma(y, 0.999, 0.5);
  unsigned long t2 = __builtin_amdgcn_s_memtime();
  printf("%lu %lu %d\n", (t1 - t0) / 64, (t2 - t1) / 64, (int)(x + (float)y));
  return 0;
}
