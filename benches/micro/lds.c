// LDS bandwidth: `lds`. Each wave (run 256 work-items in one work-group: one wave per
// SIMD) reads its own 1 KiB of LDS with conflict-free ds_read_b128 (16 per block, then
// one s_waitcnt), 1024 reads per wave. Prints `RESULT bytes_per_cycle <CU bytes per
// cycle> <cycles>` over the window of all four waves.
#include "common.h"

static __attribute__((address_space(3), loader_uninitialized)) unsigned lds[1024];

#define X4(s) s s s s
#define X16(s) X4(s) X4(s) X4(s) X4(s)
#define READS 1024

int main(void) {
  unsigned wave = __builtin_amdgcn_workitem_id_x() / 64;
  unsigned addr = (unsigned)(__UINTPTR_TYPE__)lds + wave * 1024 + lane() * 16;
  unsigned waves = __builtin_amdgcn_workgroup_size_x() / 64;
  if (wave >= 4 || waves > 4)
    return 2;
  typedef unsigned v4u __attribute__((ext_vector_type(4)));
  v4u v = {0, 0, 0, 0};
  __builtin_amdgcn_s_barrier();
  u64 t0 = cycles();
  for (int i = 0; i < READS; i += 16)
    __asm__ volatile(X16("ds_read_b128 %0, %1\n") "s_waitcnt lgkmcnt(0)\n" : "=v"(v) : "v"(addr) : "memory");
  u64 t1 = cycles();
  __asm__ volatile("" ::"v"(v));
  report_window("bytes_per_cycle", t0, t1, (double)READS * 1024 * waves, waves);
  return 0;
}
