// Operand fixtures (issue 40 item 1): destinations that keep their old value and LLVM does not tie,
// and gfx9's SMEM with both an SGPR and an immediate offset.  The instructions are inline assembly
// (no compiler writes them from C): the compiler keeps their registers' values live around them.
//   - s_cmov_b32/b64, s_cmovk_i32: "if (SCC) D = S0", D kept otherwise (every generation);
//   - op_sel's destination bit on a 16-bit VOP3 result (GFX9, GFX10): the high half written, the
//     low half kept; on a 32-bit result (v_mad_u32_u16) the manuals ignore it;
//   - s_load_dword sD, s[B:B+1], sO offset:0x10 (GFX9's soe and imm both set: soffset from bits
//     57-63), beside the soffset-only and immediate-only forms.
// build.sh says how each code object in co/ is built.
#define KERNEL extern "C" __attribute__((global))

KERNEL void keeps(int* out, const int* in, int n) {
  int tid = __builtin_amdgcn_workitem_id_x();
  int a = in[tid];
  int kept = n * 3;
  unsigned long long kept64 = (unsigned long long)out + 8;
  int constant = n + 11;
  asm volatile("s_cmp_eq_u32 %1, 16\n\ts_cmov_b32 %0, %1" : "+s"(kept) : "s"(n));
  asm volatile("s_cmp_lg_u32 %1, 0\n\ts_cmov_b64 %0, %2" : "+s"(kept64) : "s"(n), "s"(in));
  asm volatile("s_cmp_eq_u32 %1, 7\n\ts_cmovk_i32 %0, 0x7" : "+s"(constant) : "s"(n));
  int sum = a + kept + (int)kept64 + (int)(kept64 >> 32) + constant;
#if defined(__GFX9__) || defined(__GFX10__)
  int high = a * 7;
  int wide, low;
  asm volatile("v_mad_u16 %0, %1, %1, %0 op_sel:[0,0,0,1]" : "+v"(high) : "v"(a));
  asm volatile("v_fma_f16 %0, %1, %1, %1 op_sel:[0,0,0,1]" : "+v"(high) : "v"(a));
  asm volatile("v_mad_u32_u16 %0, %1, %1, %1 op_sel:[0,0,0,1]" : "=v"(wide) : "v"(a));
  asm volatile("v_mad_u16 %0, %1, %1, %1" : "=v"(low) : "v"(a));
  sum += high + wide + low;
#endif
#if defined(__GFX10__)
  int nc = a * 9;
  asm volatile("v_add_nc_u16 %0, %1, %1 op_sel:[0,0,1]" : "+v"(nc) : "v"(a));
  sum += nc;
#endif
#if defined(__GFX9__) || defined(__GFX10__)
  int offset = n * 4, both, only_sgpr, only_imm;
  // the form with both last: the offset's SGPR is live up to it only through its use there
  asm volatile("s_load_dword %1, %3, %4\n\t"
               "s_load_dword %2, %3, 0x10\n\t"
               "s_load_dword %0, %3, %4 offset:0x10\n\t"
               "s_waitcnt lgkmcnt(0)"
               : "=&s"(both), "=&s"(only_sgpr), "=&s"(only_imm) : "s"(in), "s"(offset));
  sum += both + only_sgpr + only_imm;
#endif
  out[tid] = sum;
}
