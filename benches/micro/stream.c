// Bandwidth: `stream KIND BYTES PASSES WAVES`. Every work-item walks the arrays in a
// grid-stride loop of 16-byte elements; BYTES is the size of each array. KIND (built
// as its own program with -DKIND_READ, -DKIND_COPY or -DKIND_TRIAD, so each loop is
// compiled alone): read (sum of a), copy (b = a), triad (a = b + s * c). With
// PASSES > 1 the first pass is untimed (it warms a cache-resident array: the L2
// bandwidth case) and the grid meets at a barrier before the timed ones (every wave must
// be resident: at most a CU's worth of waves per CU).
// Prints `RESULT bytes_per_cycle <bytes moved / cycles> <cycles>` over the grid-wide
// window from the first timed pass's start to the last wave's end.
#include "common.h"

typedef float float4 __attribute__((ext_vector_type(4)));
#define MAX_BYTES (256u << 20)
static float4 a[MAX_BYTES / 16];
#if !defined(KIND_READ)
static float4 b[MAX_BYTES / 16];
#endif
#if defined(KIND_TRIAD)
static float4 c[MAX_BYTES / 16];
#endif

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  unsigned bytes = atoi(argv[1]), passes = atoi(argv[2]), waves = atoi(argv[3]);
  if (bytes > MAX_BYTES || passes == 0)
    return 2;
  unsigned n = bytes / 16;
  unsigned threads = waves * 64, id = thread_id();
  // The arrays are zero-filled statics nobody else writes: hide that from the compiler,
  // which would otherwise fold the loads to zero and drop the stores.
  float4 *pa = a;
  __asm__ volatile("" : "+s"(pa));
#if !defined(KIND_READ)
  float4 *pb = b;
  __asm__ volatile("" : "+s"(pb));
#endif
#if defined(KIND_TRIAD)
  float4 *pc = c;
  __asm__ volatile("" : "+s"(pc));
#endif
  float4 acc = {0, 0, 0, 0};
  u64 t0 = cycles();
  for (unsigned pass = 0; pass < passes; pass++) {
    if (pass == 1) {
      __builtin_amdgcn_s_waitcnt(0);
      grid_barrier(waves);
      t0 = cycles();
    }
#if defined(KIND_READ)
    for (unsigned i = id; i < n; i += threads) acc += pa[i];
#elif defined(KIND_COPY)
    for (unsigned i = id; i < n; i += threads) pb[i] = pa[i];
#else
    for (unsigned i = id; i < n; i += threads) pa[i] = pb[i] + 3.0f * pc[i];
#endif
  }
  __builtin_amdgcn_s_waitcnt(0);
  u64 t1 = cycles();
  float sum = acc.x + acc.y + acc.z + acc.w;
  __asm__ volatile("" ::"v"(sum)); // the loads' results are used
#if defined(KIND_READ)
  double per_pass = bytes;
#elif defined(KIND_COPY)
  double per_pass = 2.0 * bytes;
#else
  double per_pass = 3.0 * bytes;
#endif
  report_window("bytes_per_cycle", t0, t1, per_pass * (passes > 1 ? passes - 1 : 1), waves);
  return 0;
}
