// asm_lds_reverse: each 64-lane work-group reverses its 64 u32 elements through LDS:
// out[g * 64 + i] = in[g * 64 + 63 - i]. Written by hand; uses the dispatch pointer too
// (not needed by the code, but it exercises the user SGPR order: dispatch ptr s[0:1],
// kernarg ptr s[2:3], then work-group id X in s4).
// Kernargs: in @0, out @8 (global pointers); 16 bytes. LDS: 256 bytes.
	.text
	.globl	asm_lds_reverse
	.p2align	8
	.type	asm_lds_reverse,@function
asm_lds_reverse:
	s_load_dwordx4 s[8:11], s[2:3], 0x0
	v_lshlrev_b32 v1, 2, v0
	s_lshl_b32 s5, s4, 8
	v_add_u32 v2, s5, v1
	s_waitcnt lgkmcnt(0)
	global_load_dword v3, v2, s[8:9]
	v_sub_u32 v4, 63, v0
	v_lshlrev_b32 v4, 2, v4
	s_waitcnt vmcnt(0)
	ds_write_b32 v4, v3
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b32 v5, v1
	s_waitcnt lgkmcnt(0)
	global_store_dword v2, v5, s[10:11]
	s_endpgm
.Lasm_lds_reverse_end:
	.size	asm_lds_reverse, .Lasm_lds_reverse_end-asm_lds_reverse

	.rodata
	.p2align	6
	.amdhsa_kernel asm_lds_reverse
		.amdhsa_user_sgpr_dispatch_ptr 1
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 6
		.amdhsa_next_free_sgpr 12
		.amdhsa_accum_offset 8
		.amdhsa_kernarg_size 16
		.amdhsa_group_segment_fixed_size 256
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_ieee_mode 0
		.amdhsa_float_denorm_mode_32 0
	.end_amdhsa_kernel

	.amdgpu_metadata
---
# .sgpr_count counts next_free_sgpr (12) plus VCC, flat scratch and the xnack mask
# (2 each), as the compilers count it.
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name:                       asm_lds_reverse
    .symbol:                     asm_lds_reverse.kd
    .kernarg_segment_size:       16
    .kernarg_segment_align:      8
    .group_segment_fixed_size:   256
    .private_segment_fixed_size: 0
    .wavefront_size:             64
    .sgpr_count:                 18
    .vgpr_count:                 6
    .max_flat_workgroup_size:    64
    .args:
      - { .name: in, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .name: out, .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
...
	.end_amdgpu_metadata
