// Memory-bound GPU benchmark for `dojo bench gpu --kernel memory`: each wave streams
// over its own 64 x 64 floats (a load and a store per iteration, unit stride across
// the wave's 64 lanes), so most wave-instructions are global memory operations. The
// buffers are static, one per wave of the grid (`dojo bench gpu` defines WAVES): the
// first form took each from the device malloc, a host call whose port scan and
// spin-waits (deferred atomics and system-scope loads) were most of the run's
// instructions; models/amdgpu/tests/programs/memory_malloc.c keeps it.
#include <stdio.h>

#ifndef ITERATIONS
#define ITERATIONS 1000
#endif
#ifndef WAVES
#define WAVES 4864
#endif

static float buffers[WAVES][64 * 64];

int main(void) {
  int iterations = ITERATIONS;
  unsigned lane = __builtin_amdgcn_workitem_id_x() % 64;
  unsigned waves_per_group = (__builtin_amdgcn_workgroup_size_x() + 63) / 64;
  unsigned wave = __builtin_amdgcn_workgroup_id_x() * waves_per_group + __builtin_amdgcn_workitem_id_x() / 64;
  if (wave >= WAVES)
    return 1; // more waves than buffers: WAVES is too small for this grid
  float *mine = buffers[__builtin_amdgcn_readfirstlane(wave)];
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
