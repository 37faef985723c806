// histogram: 16-bin histogram of in[i] % 16 with relaxed device-scope global atomics.
#define BLOCK 64u
#define BINS 16u

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void histogram(__global const uint *in, __global uint *bins, uint n) {
    uint i = __builtin_amdgcn_workgroup_id_x() * BLOCK + __builtin_amdgcn_workitem_id_x();
    if (i < n)
        __scoped_atomic_fetch_add(&bins[in[i] % BINS], 1u, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
}
