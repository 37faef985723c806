// wave_shuffle: cross-lane moves inside a 64-lane wavefront.
//   rotated[i] = in[wave_base + (lane + 1) % 64]             (ds_bpermute_b32)
//   shifted[i] = lane % 16 == 0 ? 0 : in[i - 1]              (DPP row_shr:1)
#define BLOCK 64u
#define DPP_ROW_SHR_1 0x111

__attribute__((amdgpu_kernel))
void wave_shuffle(const int *in, int *rotated, int *shifted) {
    unsigned lane = __builtin_amdgcn_workitem_id_x();
    unsigned i = __builtin_amdgcn_workgroup_id_x() * BLOCK + lane;
    int v = in[i];
    rotated[i] = __builtin_amdgcn_ds_bpermute((int)(((lane + 1u) & 63u) << 2), v);
    shifted[i] = __builtin_amdgcn_update_dpp(0, v, DPP_ROW_SHR_1, 0xf, 0xf, 0);
}
