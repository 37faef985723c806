// One work-item chases a random cyclic permutation of `n` 128-byte lines (Sattolo's
// shuffle), one full pass to warm the caches, then times `LOADS` dependent loads with
// s_memtime. Working sets: 32 lines (4 KiB, inside the 8 KiB L1), 256 (32 KiB, inside
// the 64 KiB L2), 2048 (256 KiB, inside the 512 KiB memory-side cache), 16384 (2 MiB,
// beyond every cache).
#include <stdio.h>
#include <stdlib.h>
#define STRIDE 32u
#define LOADS 1000u
int main(void) {
  const unsigned sizes[4] = {32u, 256u, 2048u, 16384u};
  unsigned *buf = malloc(16384u * STRIDE * sizeof(unsigned));
  if (!buf) { printf("malloc failed\n"); return 1; }
  unsigned seed = 12345u;
  for (int s = 0; s < 4; s++) {
    unsigned n = sizes[s];
    for (unsigned i = 0; i < n; i++) buf[i * STRIDE] = i * STRIDE;
    for (unsigned i = n - 1; i > 0; i--) {
      seed = seed * 1664525u + 1013904223u;
      unsigned j = (unsigned)(((unsigned long)(seed >> 8) * i) >> 24); /* in [0, i) without a division */
      unsigned t = buf[i * STRIDE];
      buf[i * STRIDE] = buf[j * STRIDE];
      buf[j * STRIDE] = t;
    }
    unsigned idx = 0;
    for (unsigned k = 0; k < n; k++) idx = buf[idx];
    unsigned long t0 = __builtin_amdgcn_s_memtime();
    for (unsigned k = 0; k < LOADS; k++) idx = buf[idx];
    unsigned long t1 = __builtin_amdgcn_s_memtime();
    printf("%u %lu %u\n", n, (t1 - t0) / LOADS, idx);
  }
  free(buf);
  return 0;
}
