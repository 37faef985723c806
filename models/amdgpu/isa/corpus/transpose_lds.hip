// transpose_lds: out = transpose(in) for a `width` x `height` row-major u32 matrix, through
// a 16x16 LDS tile padded by one column against bank conflicts. 16x16 work-groups.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define TILE 16u

extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(TILE * TILE, TILE * TILE)))
void transpose_lds(const unsigned *in, unsigned *out, unsigned width, unsigned height) {
    __shared__ unsigned tile[TILE][TILE + 1];
    unsigned tx = __builtin_amdgcn_workitem_id_x();
    unsigned ty = __builtin_amdgcn_workitem_id_y();
    unsigned bx = __builtin_amdgcn_workgroup_id_x() * TILE;
    unsigned by = __builtin_amdgcn_workgroup_id_y() * TILE;
    tile[ty][tx] = in[(by + ty) * width + bx + tx];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    out[(bx + ty) * height + by + tx] = tile[tx][ty];
}
