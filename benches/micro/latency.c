// Pointer-chase latency: `latency KIND COUNT STRIDE`. One lane follows a cyclic chain of
// COUNT slots STRIDE bytes apart (slot i holds the offset of slot i + 1 mod COUNT): one
// pass to warm the caches, then 1024 timed loads. The runner picks COUNT and STRIDE so
// that the chain fits the level being measured and maps to one set of every level above
// it (COUNT larger than their associativity: a cyclic pattern misses under LRU).
// KIND: vector (global_load_dword), scalar (s_load_dword), lds (ds_read_b32). The timed
// loop is assembly, 16 loads per block, each followed by its s_waitcnt, so a load costs
// its load-to-use latency plus the waitcnt's issue turn (the block's loop counter adds
// under one cycle per load).
// Prints `RESULT latency <cycles per load> <last offset>`.
#include "common.h"

#define MAX_BYTES (512u << 20)
static unsigned buf[MAX_BYTES / 4];
static __attribute__((address_space(3), loader_uninitialized)) unsigned lds[8192];

#define ITERS 1024
#define X4(s) s s s s
#define X16(s) X4(s) X4(s) X4(s) X4(s)

static unsigned chase_vector(const unsigned *base, unsigned p, unsigned n) {
  for (unsigned i = 0; i < n; i += 16)
    __asm__ volatile(X16("global_load_dword %0, %0, %1\n s_waitcnt vmcnt(0)\n") : "+v"(p) : "s"(base) : "memory");
  return p;
}

static unsigned chase_scalar(const unsigned *base, unsigned p, unsigned n) {
  p = __builtin_amdgcn_readfirstlane(p);
  for (unsigned i = 0; i < n; i += 16)
    __asm__ volatile(X16("s_load_dword %0, %1, %0\n s_waitcnt lgkmcnt(0)\n") : "+s"(p) : "s"(base) : "memory");
  return p;
}

static unsigned chase_lds(unsigned p, unsigned n) {
  for (unsigned i = 0; i < n; i += 16)
    __asm__ volatile(X16("ds_read_b32 %0, %0\n s_waitcnt lgkmcnt(0)\n") : "+v"(p) : : "memory");
  return p;
}

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  const char *kind = argv[1];
  unsigned n = atoi(argv[2]), stride = atoi(argv[3]);
  if (thread_id() != 0)
    return 0;
  if (n < 2 || stride < 4 || stride % 4 || (u64)n * stride > MAX_BYTES)
    return 2;
  unsigned warm = (n + 15) / 16 * 16;
  u64 t0, t1;
  unsigned p;
  if (kind[0] == 'l') {
    if ((u64)n * stride > sizeof(lds))
      return 2;
    unsigned base = (unsigned)(__UINTPTR_TYPE__)lds;
    for (unsigned i = 0; i < n; i++) lds[i * (stride / 4)] = base + ((i + 1) % n) * stride;
    p = chase_lds(base, warm);
    t0 = cycles();
    p = chase_lds(p, ITERS);
    t1 = cycles();
  } else {
    for (unsigned i = 0; i < n; i++) buf[i * (stride / 4)] = ((i + 1) % n) * stride;
    __builtin_amdgcn_s_waitcnt(0);
    if (kind[0] == 's') {
      p = chase_scalar(buf, 0, warm);
      t0 = cycles();
      p = chase_scalar(buf, p, ITERS);
      t1 = cycles();
    } else {
      p = chase_vector(buf, 0, warm);
      t0 = cycles();
      p = chase_vector(buf, p, ITERS);
      t1 = cycles();
    }
  }
  printf("RESULT latency %.2f %u\n", (double)(t1 - t0) / ITERS, p);
  return 0;
}
