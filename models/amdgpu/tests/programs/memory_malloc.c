// The first form of `dojo bench gpu --kernel memory` (benches/gpu/memory.c), kept for
// pinned.rs: each wave streams over its own buffer, which its first lane gets from the
// device malloc (a host call), so besides the loads and stores it exercises the RPC
// client's port scan and spin-waits and the deferred atomics and system-scope loads
// they issue.
#include <stdio.h>
#include <stdlib.h>

#ifndef ITERATIONS
#define ITERATIONS 1000
#endif

int main(void) {
  int iterations = ITERATIONS;
  unsigned lane = __builtin_amdgcn_workitem_id_x() % 64;
  unsigned long p = 0;
  if (lane == 0)
    p = (unsigned long)malloc(sizeof(float) * 64 * 64);
  unsigned lo = __builtin_amdgcn_readfirstlane((unsigned)p);
  unsigned hi = __builtin_amdgcn_readfirstlane((unsigned)(p >> 32));
  float *mine = (float *)(((unsigned long)hi << 32) | lo);
  if (!mine)
    return 1;
  for (int row = 0; row < 64; row++)
    mine[row * 64 + lane] = (float)lane;
  float acc = 0.0f;
  for (int i = 0; i < iterations; i++) {
    unsigned at = (i % 64) * 64 + lane;
    acc += mine[at];
    mine[at] = acc;
  }
  if (__builtin_amdgcn_workitem_id_x() == 0 && __builtin_amdgcn_workgroup_id_x() == 0)
    printf("checksum %d\n", (int)acc & 0xffff);
  return 0;
}
