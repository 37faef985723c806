// Work-groups reduce through LDS with barriers and count into a global atomic; every
// group's leader prints its sum.
#include <stdio.h>
static __attribute__((address_space(3), loader_uninitialized)) unsigned lds[256];
static unsigned total;
int main(void) {
  unsigned lid = __builtin_amdgcn_workitem_id_x();
  unsigned gid = __builtin_amdgcn_workgroup_id_x();
  unsigned n = __builtin_amdgcn_workgroup_size_x();
  lds[lid] = gid * 1000u + lid;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  for (unsigned step = n / 2; step > 0; step /= 2) {
    if (lid < step) lds[lid] += lds[lid + step];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  __scoped_atomic_fetch_add(&total, 1u, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
  if (lid == 0) printf("group %u sum %u\n", gid, lds[0]);
  return 0;
}
