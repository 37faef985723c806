// reduce_sum: each 256-lane work-group sums its slice of `in` with an LDS tree and adds
// the partial sum to out[0] atomically. HIP device code with the project's own macros.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define BLOCK 256u

static __attribute__((device)) inline void block_barrier() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(BLOCK, BLOCK)))
void reduce_sum(const unsigned *in, unsigned *out) {
    __shared__ unsigned partial[BLOCK];
    unsigned lid = __builtin_amdgcn_workitem_id_x();
    unsigned gid = __builtin_amdgcn_workgroup_id_x() * BLOCK + lid;
    partial[lid] = in[gid];
    block_barrier();
    for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (lid < stride)
            partial[lid] += partial[lid + stride];
        block_barrier();
    }
    if (lid == 0)
        __hip_atomic_fetch_add(out, partial[0], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
