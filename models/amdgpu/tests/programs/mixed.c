// Every kind of memory access a compiled program makes, for the pinned statistics: byte,
// short, dword and 16-byte loads and stores through generic (flat) and global
// pointers, partial EXEC masks, strided and gathered lanes, a private array on the
// stack (scratch), LDS with a barrier, device-scope atomics, scalar loads of the
// arguments, and host calls (malloc and printf: fine-grained memory).
#include <stdio.h>
#include <stdlib.h>
#define N (1u << 14)
typedef struct {
  unsigned a, b, c, d;
} quad;
static unsigned char bytes[N];
static unsigned short shorts[N];
static unsigned words[N];
static quad quads[N / 4];
static unsigned total;
static __attribute__((address_space(3), loader_uninitialized)) unsigned lds[256];

__attribute__((noinline)) static unsigned mix(unsigned *p, unsigned k) { return p[k & (N - 1)] * 3u + k; }

int main(int argc, char **argv) {
  unsigned lid = __builtin_amdgcn_workitem_id_x();
  unsigned id = lid + __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x();
  unsigned n = __builtin_amdgcn_grid_size_x();
  volatile unsigned priv[24];
  for (unsigned i = 0; i < 24; i++)
    priv[i] = id * i + (unsigned)argc;
  unsigned *heap = 0;
  if (lid % 64 == 0)
    heap = malloc(64 * sizeof(unsigned));
  for (unsigned k = id; k < N; k += n) {
    bytes[(k * 7u) & (N - 1)] = (unsigned char)(k + priv[k % 24]);
    shorts[k] = (unsigned short)(k * 3u);
    if (k & 1)
      words[k] = bytes[k] + shorts[(k * 5u) & (N - 1)];
    quads[k / 4].b += k;
  }
  unsigned acc = 0;
  for (unsigned k = id; k < N; k += n) {
    acc += mix(words, k * 17u) + quads[(k * 3u) & (N / 4 - 1)].b;
    if (k % 3 == 0)
      acc ^= (unsigned)shorts[k ^ 1] << 3;
  }
  lds[lid & 255] = acc;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  acc += lds[(lid * 7u + 1u) & 255];
  __scoped_atomic_fetch_add(&total, acc & 0xff, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
  if (heap) {
    for (unsigned i = 0; i < 64; i++)
      heap[i] = acc + i;
    acc += heap[acc & 63];
    free(heap);
  }
  if (id == 0)
    printf("mixed %u %u\n", acc, (unsigned)priv[argc % 24]);
  return 0;
}
