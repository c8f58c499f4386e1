// Wave64 lane-mask fixtures (issue 40, GFX10 and later): built once with -mwavefrontsize64 and once
// without (wave32, the control).  On GFX10 and later a lane mask is one SGPR in wave32 and an SGPR
// pair in wave64 (s[4:5]): a VOP3 compare's destination, v_cndmask_b32's mask, the carry out and in
// of 64-bit adds (v_add_co_u32 / v_add_co_ci_u32), v_div_scale's and v_mad_u64_u32's SGPR result.
// Several masks are kept alive at once so that the compiler writes them to SGPRs, not vcc.
// build.sh says how each code object in co/ is built.
#define KERNEL extern "C" __attribute__((global))

KERNEL void lane_masks(float* out, const float* a, const float* b, const int* c, unsigned long long* wide,
                       int n) {
  int tid = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64;
  if (tid >= n) return;
  float x = a[tid], y = b[tid];
  int k = c[tid];
  bool p = x < y, q = k > 7, r = x != 0.0f, s = (k & 3) == 1;
  float quotient = x / y;                                   // v_div_scale, v_div_fmas
  float pick = p ? x : y;                                   // v_cndmask with a mask in SGPRs
  pick = q ? pick * 2.0f : pick + 1.0f;
  pick = r ? pick : quotient;
  pick = s ? -pick : pick;
  unsigned long long w = wide[tid];
  unsigned long long product = (unsigned long long)(unsigned)k * (unsigned)tid + w;   // v_mad_u64_u32
  w += (unsigned long long)(unsigned)k << 33;               // 64-bit add: carry out, carry in
  w -= product;                                             // 64-bit subtract
  wide[tid] = (p && q) || (r && !s) ? w : product;
  out[tid] = pick + (p ^ r ? 1.0f : 0.0f) + (q ^ s ? 2.0f : 0.0f);
}

KERNEL void divide_wide(unsigned long long* out, const unsigned long long* num, const unsigned long long* den,
                        int n) {
  int tid = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64;
  if (tid < n) out[tid] = num[tid] / (den[tid] | 1) + num[tid] % (den[tid] | 3);   // 64-bit division
}
