// Atomic throughput: `atomic ITERATIONS WAVES`. Every work-item adds 1 to its own
// counter (one per lane of the grid, so no two lanes of a wave share a line's word)
// ITERATIONS times with a relaxed atomic add whose result is unused.
// Prints `RESULT atomics_per_cycle <lane atomics per cycle> <cycles>`.
#include "common.h"

#define MAX_LANES (1u << 20)
static unsigned counters[MAX_LANES];

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  unsigned iterations = atoi(argv[1]), waves = atoi(argv[2]);
  unsigned id = thread_id();
  if (id >= MAX_LANES)
    return 2;
  unsigned *mine = counters + id;
  __asm__ volatile("" : "+v"(mine));
  u64 t0 = cycles();
  for (unsigned i = 0; i < iterations; i++)
    __atomic_fetch_add(mine, 1, __ATOMIC_RELAXED);
  __builtin_amdgcn_s_waitcnt(0);
  u64 t1 = cycles();
  report_window("atomics_per_cycle", t0, t1, (double)iterations * waves * 64, waves);
  return 0;
}
