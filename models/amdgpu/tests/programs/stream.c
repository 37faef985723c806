// Every work-item copies a strided share of a 4 MiB buffer into another (the grid size
// is a power of two: the program avoids a division, which the executor lacks).
#include <stdio.h>
#define N (1u << 20)
static unsigned src[N];
static unsigned dst[N];
int main(int argc, char **argv) {
  /* The compiler must not fold the zero-filled source into constants: pick it at run time. */
  const unsigned *from = argc > 100 ? dst : src;
  unsigned id = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x();
  unsigned total = __builtin_amdgcn_grid_size_x();
  for (unsigned k = id; k < N; k += total) dst[k] = from[k] + 1u;
  if (id == ((N - 1) & (total - 1))) printf("copied %u\n", dst[N - 1]);
  return 0;
}
