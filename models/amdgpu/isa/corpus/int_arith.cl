// int_arith: a mix of 32-bit integer multiply, shifts, xor, division and remainder by
// constants. OpenCL C 2.0 without device libraries (work-item ids via builtins).
#define BLOCK 128u

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void int_arith(__global const uint *a, __global const uint *b, __global uint *out) {
    uint i = __builtin_amdgcn_workgroup_id_x() * BLOCK + __builtin_amdgcn_workitem_id_x();
    uint x = a[i];
    uint y = b[i];
    uint r = (x * 2654435761u) ^ (y << 5) ^ (x >> 3);
    r += y / 7u;
    r += x % 13u;
    r -= (x > y) ? (x - y) : (y - x);
    out[i] = r;
}
