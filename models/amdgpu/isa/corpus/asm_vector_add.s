// asm_vector_add: out[i] = a[i] + b[i] (u32) for 64-lane work-groups, written by hand.
// Initial state: s[0:1] kernarg pointer, s2 work-group id X, v0 work-item id X.
// Kernargs: a @0, b @8, out @16 (global pointers); 24 bytes.
	.text
	.globl	asm_vector_add
	.p2align	8
	.type	asm_vector_add,@function
asm_vector_add:
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshl_add_u32 v0, s2, 6, v0
	v_lshlrev_b32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[4:5]
	global_load_dword v3, v1, s[6:7]
	s_waitcnt vmcnt(0)
	v_add_u32 v2, v2, v3
	global_store_dword v1, v2, s[8:9]
	s_endpgm
.Lasm_vector_add_end:
	.size	asm_vector_add, .Lasm_vector_add_end-asm_vector_add

	.rodata
	.p2align	6
	.amdhsa_kernel asm_vector_add
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 4
		.amdhsa_next_free_sgpr 10
		.amdhsa_accum_offset 4
		.amdhsa_kernarg_size 24
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
	.end_amdhsa_kernel

	.amdgpu_metadata
---
# .sgpr_count counts next_free_sgpr (10) plus VCC, flat scratch and the xnack mask
# (2 each), as the compilers count it.
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name:                       asm_vector_add
    .symbol:                     asm_vector_add.kd
    .kernarg_segment_size:       24
    .kernarg_segment_align:      8
    .group_segment_fixed_size:   0
    .private_segment_fixed_size: 0
    .wavefront_size:             64
    .sgpr_count:                 16
    .vgpr_count:                 4
    .max_flat_workgroup_size:    64
    .args:
      - { .name: a, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: b, .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .offset: 16, .size: 8, .value_kind: global_buffer, .address_space: global }
...
	.end_amdgpu_metadata
