// VALU-bound GPU benchmark for `dojo bench gpu`: every work-item runs a chain of
// multiply-adds; one work-item prints a checksum so the work cannot be optimized away.
#include <stdio.h>
#include <stdlib.h>

#ifndef ITERATIONS
#define ITERATIONS 1000
#endif

int main(void) {
  int iterations = ITERATIONS;
  unsigned id = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x();
  float x = (float)id, y = 1.0f, z = 0.5f;
  for (int i = 0; i < iterations; i++) {
    x = x * 1.0001f + 0.5f;
    y = y * 0.9999f + x;
    z = z * 0.5f + y;
  }
  if (id == 0)
    printf("checksum %d\n", (int)(x + y + z) & 0xffff);
  return 0;
}
