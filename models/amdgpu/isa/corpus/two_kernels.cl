// two_kernels: two kernels in one code object, so that descriptors and metadata entries
// must be matched by symbol, not by position.
//   scale_by:   data[i] = data[i] * factor
//   add_offset: data[i] = data[i] + offset (with a 256-lane required work-group size)
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void scale_by(__global uint *data, uint factor) {
    uint i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
    data[i] = data[i] * factor;
}

__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void add_offset(__global uint *data, uint offset) {
    uint i = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
    data[i] = data[i] + offset;
}
