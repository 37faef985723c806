// global_tables: reads through a table of pointers to the object's own global arrays,
// which the linker turns into R_AMDGPU_RELATIVE64 dynamic relocations that a loader must
// patch for its base address.
//   out[i] = tables[which & 1][i & 3] + i
int table_a[4] = {1, 2, 3, 4};
int table_b[4] = {10, 20, 30, 40};
int *tables[2] = {table_a, table_b};

__attribute__((amdgpu_kernel))
void global_tables(int *out, unsigned which) {
    unsigned i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
    out[i] = tables[which & 1u][i & 3u] + (int)i;
}
