// Register operands of the forms read from extra dwords (issue 40 item 1): VOP3 and VOP3P in
// their DPP forms (GFX11 and later), SDWA compares writing an SGPR (GFX9, GFX10) and MIMG NSA
// address lists (GFX10, GFX11), each written as inline assembly after moves that define every
// register it reads (the clobbers make the compiler count them in .vgpr_count/.sgpr_count).
// Built by build.sh; tests/oracle/test_isa_operands.py and test_isa_liveness.py hold spillway's
// reading of them to llvm-objdump's text.
#define KERNEL extern "C" __attribute__((global)) __attribute__((visibility("default")))

#define V_DEFINED "v_mov_b32 v1, 1.0\n v_mov_b32 v2, 2.0\n v_mov_b32 v3, 0\n v_mov_b32 v4, 4\n"          \
                  "v_mov_b32 v5, 5\n v_mov_b32 v6, 6\n v_mov_b32 v7, 7\n v_mov_b32 v8, 8\n"                 \
                  "v_mov_b32 v9, 9\n v_mov_b32 v10, 10\n v_mov_b32 v11, 11\n v_mov_b32 v12, 12\n"           \
                  "v_mov_b32 v13, 13\n v_mov_b32 v14, 14\n v_mov_b32 v15, 15\n"
#define S_DEFINED "s_mov_b32 s8, 0\n s_mov_b32 s9, 0\n s_mov_b32 s12, 0\n s_mov_b32 s13, 0\n"              \
                  "s_mov_b32 s14, 0\n s_mov_b32 s15, 0\n s_mov_b32 s16, 0\n s_mov_b32 s17, 0\n"             \
                  "s_mov_b32 s18, 0\n s_mov_b32 s19, 0\n s_mov_b32 s20, 0\n s_mov_b32 s21, 0\n"             \
                  "s_mov_b32 s22, 0\n s_mov_b32 s23, 0\n"
#define CLOBBERS "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14",     \
                 "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "s4", "s5", "s6", "s7", "s8", \
                 "s9", "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19", "s20", "s21",    \
                 "s22", "s23"

#if defined(__gfx1100__) || defined(__gfx1151__) || defined(__gfx1201__) || defined(__gfx1250__)
// VOP3 (and VOP3P, VOPC in VOP3) with a DPP16 or DPP8 dword: src0 in the DPP dword, the destination
// kept (used too) where a row/bank mask or an unbounded shift leaves lanes unwritten.
KERNEL void vop3_dpp(float *out) {
  asm volatile(V_DEFINED S_DEFINED
               "v_add_f32_e64_dpp v0, v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n"
               "v_add_f32_e64_dpp v3, v1, v2 row_shl:1 row_mask:0x5 bank_mask:0xf\n"
               "v_add_f32_e64_dpp v4, v1, v2 row_shl:1 row_mask:0xf bank_mask:0xf\n"
               "v_add_f32_e64_dpp v5, v1, v2 row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1\n"
               "v_add_f32_e64_dpp v6, v5, v7 dpp8:[7,6,5,4,3,2,1,0]\n"
               "v_fma_f32_e64_dpp v16, v5, v6, v7 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf\n"
               "v_cmp_lt_f32_e64_dpp s4, v1, v2 quad_perm:[1,0,3,2] row_mask:0x3 bank_mask:0xf\n"
               "v_cmpx_lt_f32_e64_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n"
               "v_add_co_u32_e64_dpp v17, s6, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n"
               "v_cndmask_b32_e64_dpp v18, v2, v3, s8 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xe\n"
               "v_mov_b32_e64_dpp v19, v10 row_shr:2 row_mask:0xf bank_mask:0xf\n"
#if !defined(__gfx1250__)
               "v_dot2_f32_f16_e64_dpp v20, v11, v12, v13 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n"
#endif
               "v_fma_mix_f32_e64_dpp v21, v11, v12, v13 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n"
#if !defined(__gfx1100__)
               "v_add_f32_e64_dpp v22, v14, s9 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n"   // an SGPR src1 (not gfx1100)
#endif
               "v_add_f32_e64_dpp v23, v15, v16 row_share:1 row_mask:0xf bank_mask:0xf fi:1\n"
               ::: CLOBBERS);
  out[0] = 1.0f;
}
#endif

#if defined(__gfx1100__) || defined(__gfx1151__)
// true16 halves through op_sel in VOP3 DPP (gfx11 runs true16 code; the operands' halves are VGPRs)
KERNEL void vop3_dpp_t16(float *out) {
  asm volatile(V_DEFINED S_DEFINED
               "v_add_f16_e64_dpp v1.h, v2.h, v3.l quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n"
               "v_add_f16_e64_dpp v4.l, v5.l, v6.h quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n"
               ::: CLOBBERS);
  out[0] = 1.0f;
}
#endif

#if defined(__gfx906__) || defined(__gfx1030__)
// SDWA compares: SD set names the SGPR written (wave64 pairs on GFX9, one on GFX10 wave32), clear: vcc.
#if defined(__gfx906__)
#define SDST(a, b) "s[" #a ":" #b "]"
#else
#define SDST(a, b) "s" #a
#endif
KERNEL void sdwa_compare(float *out) {
  asm volatile(V_DEFINED S_DEFINED
               "v_cmp_eq_u32_sdwa " SDST(4, 5) ", v1, v2 src0_sel:WORD_1 src1_sel:DWORD\n"
               "v_cmp_lt_f32_sdwa " SDST(10, 11) ", s8, v2 src0_sel:DWORD src1_sel:BYTE_0\n"
               "v_cmp_class_f32_sdwa " SDST(6, 7) ", v3, v4 src0_sel:WORD_1 src1_sel:DWORD\n"
               "v_cndmask_b32_e64 v5, v1, v2, " SDST(4, 5) "\n"
               ::: CLOBBERS);
  out[0] = 1.0f;
}
#endif

#if defined(__gfx1030__) || defined(__gfx1100__) || defined(__gfx1151__)
// NSA: the first address in vaddr, the others one byte each in the dwords after the 64 bits
// (GFX11: at most five, the fifth a tuple of the rest).
#if defined(__gfx1030__)
#define SAMPLE_D_3D "[v4, v9, v6, v1, v10, v11, v12, v13, v14]"
#else
#define SAMPLE_D_3D "[v4, v9, v6, v1, v[10:14]]"
#endif
KERNEL void nsa(float *out) {
  asm volatile(V_DEFINED S_DEFINED
               "image_load v[16:19], [v4, v6], s[12:19] dmask:0xf dim:SQ_RSRC_IMG_2D\n"
               "image_load v[20:23], [v4, v6, v2], s[12:19] dmask:0xf dim:SQ_RSRC_IMG_3D\n"
               "image_sample_d v[16:19], " SAMPLE_D_3D ", s[12:19], s[20:23] dmask:0xf dim:SQ_RSRC_IMG_3D\n"
               "s_waitcnt vmcnt(0)\n"
               ::: CLOBBERS);
  out[0] = 1.0f;
}
#endif
