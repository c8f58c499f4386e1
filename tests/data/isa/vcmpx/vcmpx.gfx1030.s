	.amdgcn_target "amdgcn-amd-amdhsa--gfx1030"
	.amdhsa_code_object_version 6
	.text
	.protected	vcmpx_scratch           ; -- Begin function vcmpx_scratch
	.globl	vcmpx_scratch
	.p2align	8
	.type	vcmpx_scratch,@function
vcmpx_scratch:                          ; @vcmpx_scratch
; %bb.0:
	s_load_dwordx2 s[8:9], s[4:5], 0x10
	s_add_u32 s0, s0, s7
	s_addc_u32 s1, s1, 0
	s_mov_b32 s6, exec_lo
	s_waitcnt lgkmcnt(0)
	s_mov_b32 s13, s8
	v_mov_b32_e32 v9, v0
	.long 0xd4940000, 0x0002120d ; v_cmpx_gt_i32_e64 s13, v9 (vdst field 0, as clang 15 encodes it)
	s_cbranch_execz .LBB0_2
; %bb.1:
	s_load_dwordx4 s[4:7], s[4:5], 0x0
	v_mul_u32_u24_e32 v1, 40, v0
	v_add_nc_u32_e32 v41, s9, v0
	v_lshlrev_b32_e32 v0, 2, v0
	v_lshlrev_b32_e32 v37, 2, v1
	v_mul_hi_i32 v42, 0x66666667, v41
	s_waitcnt lgkmcnt(0)
	s_clause 0x9
	global_load_dwordx4 v[1:4], v37, s[6:7]
	global_load_dwordx4 v[5:8], v37, s[6:7] offset:16
	global_load_dwordx4 v[9:12], v37, s[6:7] offset:32
	global_load_dwordx4 v[13:16], v37, s[6:7] offset:48
	global_load_dwordx4 v[17:20], v37, s[6:7] offset:64
	global_load_dwordx4 v[21:24], v37, s[6:7] offset:80
	global_load_dwordx4 v[25:28], v37, s[6:7] offset:96
	global_load_dwordx4 v[29:32], v37, s[6:7] offset:112
	global_load_dwordx4 v[33:36], v37, s[6:7] offset:128
	global_load_dwordx4 v[37:40], v37, s[6:7] offset:144
	v_lshrrev_b32_e32 v43, 31, v42
	v_ashrrev_i32_e32 v42, 4, v42
	s_and_b32 s6, s9, 31
	s_lshl2_add_u32 s6, s6, 0
	v_add_nc_u32_e32 v42, v42, v43
	v_mov_b32_e32 v43, s6
	v_mul_lo_u32 v42, v42, 40
	v_sub_nc_u32_e32 v41, v41, v42
	v_mov_b32_e32 v42, s8
	s_waitcnt vmcnt(9)
	buffer_store_dword v1, off, s[0:3], 0
	buffer_store_dword v2, off, s[0:3], 0 offset:4
	buffer_store_dword v3, off, s[0:3], 0 offset:8
	buffer_store_dword v4, off, s[0:3], 0 offset:12
	s_waitcnt vmcnt(8)
	buffer_store_dword v5, off, s[0:3], 0 offset:16
	buffer_store_dword v6, off, s[0:3], 0 offset:20
	buffer_store_dword v7, off, s[0:3], 0 offset:24
	buffer_store_dword v8, off, s[0:3], 0 offset:28
	s_waitcnt vmcnt(7)
	buffer_store_dword v9, off, s[0:3], 0 offset:32
	buffer_store_dword v10, off, s[0:3], 0 offset:36
	buffer_store_dword v11, off, s[0:3], 0 offset:40
	buffer_store_dword v12, off, s[0:3], 0 offset:44
	s_waitcnt vmcnt(6)
	buffer_store_dword v13, off, s[0:3], 0 offset:48
	buffer_store_dword v14, off, s[0:3], 0 offset:52
	buffer_store_dword v15, off, s[0:3], 0 offset:56
	buffer_store_dword v16, off, s[0:3], 0 offset:60
	s_waitcnt vmcnt(5)
	buffer_store_dword v17, off, s[0:3], 0 offset:64
	buffer_store_dword v18, off, s[0:3], 0 offset:68
	buffer_store_dword v19, off, s[0:3], 0 offset:72
	buffer_store_dword v20, off, s[0:3], 0 offset:76
	s_waitcnt vmcnt(4)
	buffer_store_dword v21, off, s[0:3], 0 offset:80
	buffer_store_dword v22, off, s[0:3], 0 offset:84
	buffer_store_dword v23, off, s[0:3], 0 offset:88
	buffer_store_dword v24, off, s[0:3], 0 offset:92
	s_waitcnt vmcnt(3)
	buffer_store_dword v25, off, s[0:3], 0 offset:96
	buffer_store_dword v26, off, s[0:3], 0 offset:100
	buffer_store_dword v27, off, s[0:3], 0 offset:104
	buffer_store_dword v28, off, s[0:3], 0 offset:108
	s_waitcnt vmcnt(2)
	buffer_store_dword v29, off, s[0:3], 0 offset:112
	buffer_store_dword v30, off, s[0:3], 0 offset:116
	buffer_store_dword v31, off, s[0:3], 0 offset:120
	buffer_store_dword v32, off, s[0:3], 0 offset:124
	s_waitcnt vmcnt(1)
	buffer_store_dword v33, off, s[0:3], 0 offset:128
	buffer_store_dword v34, off, s[0:3], 0 offset:132
	buffer_store_dword v35, off, s[0:3], 0 offset:136
	buffer_store_dword v36, off, s[0:3], 0 offset:140
	s_waitcnt vmcnt(0)
	buffer_store_dword v37, off, s[0:3], 0 offset:144
	buffer_store_dword v38, off, s[0:3], 0 offset:148
	buffer_store_dword v39, off, s[0:3], 0 offset:152
	buffer_store_dword v40, off, s[0:3], 0 offset:156
	buffer_store_dword v42, v43, s[0:3], 0 offen
	v_lshl_add_u32 v41, v41, 2, 0
	buffer_load_dword v1, v41, s[0:3], 0 offen
	s_waitcnt vmcnt(0)
	global_store_dword v0, v1, s[4:5]
.LBB0_2:
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel vcmpx_scratch
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 176
		.amdhsa_kernarg_size 24
		.amdhsa_user_sgpr_count 6
		.amdhsa_user_sgpr_private_segment_buffer 1
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_flat_scratch_init 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_wavefront_size32 1
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_system_sgpr_private_segment_wavefront_offset 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 44
		.amdhsa_next_free_sgpr 14
		.amdhsa_reserve_vcc 0
		.amdhsa_reserve_flat_scratch 0
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_dx10_clamp 1
		.amdhsa_ieee_mode 1
		.amdhsa_fp16_overflow 0
		.amdhsa_workgroup_processor_mode 1
		.amdhsa_memory_ordered 1
		.amdhsa_forward_progress 1
		.amdhsa_shared_vgpr_count 0
		.amdhsa_exception_fp_ieee_invalid_op 0
		.amdhsa_exception_fp_denorm_src 0
		.amdhsa_exception_fp_ieee_div_zero 0
		.amdhsa_exception_fp_ieee_overflow 0
		.amdhsa_exception_fp_ieee_underflow 0
		.amdhsa_exception_fp_ieee_inexact 0
		.amdhsa_exception_int_div_zero 0
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	vcmpx_scratch, .Lfunc_end0-vcmpx_scratch
                                        ; -- End function
	.set vcmpx_scratch.num_vgpr, 44
	.set vcmpx_scratch.num_agpr, 0
	.set vcmpx_scratch.numbered_sgpr, 14
	.set vcmpx_scratch.num_named_barrier, 0
	.set vcmpx_scratch.private_seg_size, 176
	.set vcmpx_scratch.uses_vcc, 0
	.set vcmpx_scratch.uses_flat_scratch, 0
	.set vcmpx_scratch.has_dyn_sized_stack, 0
	.set vcmpx_scratch.has_recursion, 0
	.set vcmpx_scratch.has_indirect_call, 0
	.section	.AMDGPU.csdata,"",@progbits
; Kernel info:
; codeLenInByte = 600
; TotalNumSgprs: 10
; NumVgprs: 44
; ScratchSize: 176
; MemoryBound: 1
; FloatMode: 240
; IeeeMode: 1
; LDSByteSize: 0 bytes/workgroup (compile time only)
; SGPRBlocks: 0
; VGPRBlocks: 5
; NumSGPRsForWavesPerEU: 10
; NumVGPRsForWavesPerEU: 44
; Occupancy: 16
; WaveLimiterHint : 1
; COMPUTE_PGM_RSRC2:SCRATCH_EN: 1
; COMPUTE_PGM_RSRC2:USER_SGPR: 6
; COMPUTE_PGM_RSRC2:TRAP_HANDLER: 0
; COMPUTE_PGM_RSRC2:TGID_X_EN: 1
; COMPUTE_PGM_RSRC2:TGID_Y_EN: 0
; COMPUTE_PGM_RSRC2:TGID_Z_EN: 0
; COMPUTE_PGM_RSRC2:TIDIG_COMP_CNT: 0
	.text
	.p2alignl 6, 3214868480
	.fill 48, 4, 3214868480
	.section	.AMDGPU.gpr_maximums,"",@progbits
	.set amdgpu.max_num_vgpr, 0
	.set amdgpu.max_num_agpr, 0
	.set amdgpu.max_num_sgpr, 0
	.set amdgpu.max_num_named_barrier, 0
	.text
	.type	__hip_cuid_9a6d83dbf7d9279b,@object ; @__hip_cuid_9a6d83dbf7d9279b
	.section	.bss,"aw",@nobits
	.globl	__hip_cuid_9a6d83dbf7d9279b
__hip_cuid_9a6d83dbf7d9279b:
	.byte	0                               ; 0x0
	.size	__hip_cuid_9a6d83dbf7d9279b, 1

	.ident	"Debian clang version 22.1.8 (1~deb12u1)"
	.section	".note.GNU-stack","",@progbits
	.addrsig
	.addrsig_sym __hip_cuid_9a6d83dbf7d9279b
	.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .offset:         16
        .size:           4
        .value_kind:     by_value
      - .offset:         20
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 24
    .max_flat_workgroup_size: 1024
    .name:           vcmpx_scratch
    .private_segment_fixed_size: 176
    .sgpr_count:     14
    .sgpr_spill_count: 0
    .symbol:         vcmpx_scratch.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     44
    .vgpr_spill_count: 0
    .wavefront_size: 32
    .workgroup_processor_mode: 1
amdhsa.target:   amdgcn-amd-amdhsa--gfx1030
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
