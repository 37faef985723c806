// Shared helpers of the timing microbenchmarks (`dojo bench micro`): the shader clock,
// lane and wave ids, and a grid-wide measurement window kept with atomics (atomics are
// performed in simulated-time order at the coherent home, so the result is the same on
// any number of worker threads).
#include <stdio.h>
#include <stdlib.h>

typedef unsigned long u64;

static inline u64 cycles(void) { return __builtin_readcyclecounter(); }
static inline unsigned lane(void) { return __builtin_amdgcn_workitem_id_x() % 64; }
static inline unsigned thread_id(void) {
  return __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x();
}

// The grid-wide window: the earliest start and latest end of any wave, and how many
// waves reported. The wave that reports last prints `RESULT <name> <value>` with
// value = numerator / (end - start).
static u64 window_start = ~0ul, window_end = 0;
static unsigned window_waves = 0;

static void report_window(const char *name, u64 t0, u64 t1, double numerator, unsigned waves) {
  if (lane() != 0)
    return;
  __atomic_fetch_min(&window_start, t0, __ATOMIC_RELAXED);
  __atomic_fetch_max(&window_end, t1, __ATOMIC_RELAXED);
  unsigned done = __atomic_fetch_add(&window_waves, 1, __ATOMIC_ACQ_REL) + 1;
  if (done == waves) {
    u64 s = __atomic_fetch_add(&window_start, 0, __ATOMIC_ACQUIRE);
    u64 e = __atomic_fetch_add(&window_end, 0, __ATOMIC_ACQUIRE);
    printf("RESULT %s %.3f %lu\n", name, numerator / (double)(e - s), e - s);
  }
}


// The current value of `*p` through an atomic read-modify-write (a compare-exchange that
// never changes it): atomics are performed in simulated-time order at the coherent home,
// so spinning on one is deterministic on any number of worker threads (a plain or
// idempotent atomic load would be turned into a plain load by the compiler).
static inline unsigned atomic_read(unsigned *p) {
  unsigned seen = 0;
  __atomic_compare_exchange_n(p, &seen, 0u, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE);
  return seen;
}

// Waits until `waves` waves arrived (every wave of the grid must be resident).
static unsigned barrier_arrived = 0;
static void grid_barrier(unsigned waves) {
  if (lane() == 0) {
    __atomic_fetch_add(&barrier_arrived, 1, __ATOMIC_ACQ_REL);
    while (atomic_read(&barrier_arrived) < waves)
      __builtin_amdgcn_s_sleep(8);
  }
  __builtin_amdgcn_wave_barrier();
}
