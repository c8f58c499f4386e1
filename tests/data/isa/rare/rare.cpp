// Fixtures for the decoder's rarely used instructions (issue 31): global data
// share (GDS) and wave semaphores (ds_gws_*, ds_ordered_count,
// ds_add_gs_reg_rtn), messages, traps and halts, exports, parameter
// interpolation (VINTRP, VINTERP, LDSDIR), LDS DMA, ray tracing (BVH), and
// the scaled matrix ops of gfx950 and gfx1250 (two 64-bit instructions that
// llvm-objdump reads as one).  HIP, device-only, no headers or device
// libraries (as kernels.cpp); each kernel holds what its target has, by the
// target macros clang defines.  build.sh has the exact commands.
// Instructions no builtin emits are inline assembly: the kernels are never
// run, only decoded.
//
//   gws          __builtin_amdgcn_ds_gws_* (GFX8-GFX11)
//   gws_loop     ds_gws_barrier in a loop, then a loop nest (GFX8-GFX11; the loops everywhere)
//   messages     s_sendmsg, s_sendmsghalt, s_ttracedata, s_setprio, s_sleep,
//                s_sethalt, s_trap (every target); s_sendmsg_rtn (GFX11 on)
//   gds          ds_ordered_count (GFX8-GFX11 but gfx90a/gfx94x/gfx950),
//                ds_add_gs_reg_rtn (GFX11)
//   exports      exp (GFX8-GFX11 with graphics), export (GFX12, GFX13)
//   interpolation  VINTRP (GFX8-GFX10 with graphics), LDSDIR and VINTERP
//                (GFX11, GFX12, GFX13)
//   lds_dma      buffer_store_lds_dword (GFX8, GFX9 up to gfx90a)
//   bvh          image_bvh_intersect_ray (gfx1030 on, gfx1013)
//   scaled_mfma  v_mfma_scale_f32_16x16x128_f8f6f4 (gfx950)
//   scaled_wmma  v_wmma_scale_f32_16x16x128_f8f6f4 (gfx1250: two VOP3P
//                instructions, one to llvm-objdump)

#define KERNEL extern "C" __attribute__((global))

// The inline assembly writes m0 and says so: clang warns that m0 is reserved.
#pragma clang diagnostic ignored "-Winline-asm"

#if defined(__GFX8__) || defined(__GFX9__) || defined(__GFX10__) || defined(__GFX11__)
#define HAS_GWS 1
#endif
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || \
    defined(__gfx950__) || defined(__gfx9_4_generic__)
#define COMPUTE_ONLY_GFX9 1
#endif
#if (defined(__GFX8__) || defined(__GFX9__) || defined(__GFX10__)) && !defined(COMPUTE_ONLY_GFX9)
#define HAS_VINTRP 1
#endif

KERNEL void gws(int *out, unsigned v) {
#ifdef HAS_GWS
  __builtin_amdgcn_ds_gws_init(v, 0);
  __builtin_amdgcn_ds_gws_barrier(v, 1);
  __builtin_amdgcn_ds_gws_sema_v(2);
  __builtin_amdgcn_ds_gws_sema_br(v, 3);
  __builtin_amdgcn_ds_gws_sema_p(4);
  __builtin_amdgcn_ds_gws_sema_release_all(5);
#endif
  out[0] = 1;
}

// The shape (JAX's CholeskyUpdateKernel, llama.cpp's soft_max_f32_parallelize_cols): a
// ds_gws_barrier inside a loop, and more loops after it, which a decoder that stops at the GWS
// instruction loses.
KERNEL void gws_loop(int *out, unsigned v, int n) {
  for (int i = 0; i < n; ++i) {
#ifdef HAS_GWS
    __builtin_amdgcn_ds_gws_barrier(v, 0);
#endif
    out[i] += (int)v;
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      out[i * n + j] *= i + j;
}

KERNEL void messages(int *out, unsigned v) {
  __builtin_amdgcn_s_sendmsg(1, v);
  __builtin_amdgcn_s_sendmsghalt(1, v);
  __builtin_amdgcn_s_ttracedata(v);
  __builtin_amdgcn_s_setprio(2);
  __builtin_amdgcn_s_sleep(3);
  asm volatile("s_sethalt 0");
#if defined(__GFX11__) || defined(__GFX12__) || defined(__GFX13__)
  out[1] = __builtin_amdgcn_s_sendmsg_rtn(128);
#endif
  if (v == 7)
    __builtin_trap();
  out[0] = 2;
}

KERNEL void gds(int *out, int v) {
#if defined(HAS_GWS) && !defined(COMPUTE_ONLY_GFX9)
  int r;
  asm volatile("s_mov_b32 m0, 0\n\tds_ordered_count %0, %1 gds\n\ts_waitcnt lgkmcnt(0)" : "=v"(r) : "v"(v) : "m0");
  out[0] = r;
#endif
#if defined(__GFX11__)
  unsigned long long sum;
  asm volatile("ds_add_gs_reg_rtn %0, %1 offset:16 gds\n\ts_waitcnt lgkmcnt(0)" : "=v"(sum) : "v"(v));
  out[1] = (int)sum;
#endif
}

KERNEL void exports(int *out) {
#if defined(HAS_VINTRP)
  asm volatile("exp mrt0 off, off, off, off done vm");
#elif defined(__GFX11__)
  asm volatile("exp mrt0 off, off, off, off done");
#elif (defined(__GFX12__) && !defined(__gfx1250__)) || defined(__GFX13__)
  asm volatile("export mrt0 off, off, off, off done");
#endif
  out[0] = 3;
}

KERNEL void interpolation(float *out, float i) {
  float r = i;
#if defined(HAS_VINTRP)
  asm volatile("s_mov_b32 m0, 0\n\tv_interp_p1_f32 %0, %1, attr0.x\n\tv_interp_mov_f32 %0, p10, attr0.y"
               : "=v"(r) : "v"(i) : "m0");
#elif defined(__GFX11__)
  asm volatile("s_mov_b32 m0, 0\n\tlds_param_load %0, attr0.x\n\tlds_direct_load %0\n\t"
               "v_interp_p10_f32 %0, %1, %1, %1" : "=&v"(r) : "v"(i) : "m0");
#elif (defined(__GFX12__) && !defined(__gfx1250__)) || defined(__GFX13__)
  asm volatile("s_mov_b32 m0, 0\n\tds_param_load %0, attr0.x\n\tds_direct_load %0\n\t"
               "v_interp_p10_f32 %0, %1, %1, %1" : "=&v"(r) : "v"(i) : "m0");
#endif
  out[0] = r;
}

KERNEL void lds_dma(int *out) {
#if defined(__GFX8__) || (defined(__GFX9__) && !defined(__gfx942__) && !defined(__gfx950__) && \
                          !defined(__gfx9_4_generic__) && !defined(__gfx940__) && !defined(__gfx941__))
  asm volatile("s_mov_b32 m0, 0\n\tbuffer_store_lds_dword s[4:7], 0 offset:16 lds" ::: "m0");
#endif
  out[0] = 4;
}

typedef float float4_ __attribute__((ext_vector_type(4)));
typedef unsigned uint4_ __attribute__((ext_vector_type(4)));

KERNEL void bvh(uint4_ *out, unsigned node, float extent, uint4_ descriptor) {
#if defined(__gfx1013__) || defined(__gfx1030__) || defined(__gfx1034__) || defined(__GFX11__) || \
    (defined(__GFX12__) && !defined(__gfx1250__))
  float4_ origin = {1, 2, 3, 0}, direction = {0, 1, 0, 0}, inverse = {1, 1, 1, 0};
  out[0] = __builtin_amdgcn_image_bvh_intersect_ray(node, extent, origin, direction, inverse, descriptor);
#else
  out[0] = descriptor;
#endif
}

#if defined(__gfx950__)
typedef int int8_ __attribute__((ext_vector_type(8)));
KERNEL void scaled_mfma(float4_ *out, const int8_ *a, const int8_ *b, int sa, int sb) {
  out[0] = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a[0], b[0], out[0], 0, 0, 0, sa, 0, sb);
}
#endif

#if defined(__gfx1250__)
// No builtin emits it from clang 22: inline assembly.  LLVM 22 and 24 encode its
// first half's unused src2 differently (v0 / 0); both read either as one pair.
typedef float float8_ __attribute__((ext_vector_type(8)));
typedef int int16_ __attribute__((ext_vector_type(16)));
KERNEL void scaled_wmma(float8_ *out, const int16_ *a, const int16_ *b, int sa, int sb) {
  float8_ accumulator = out[0];
  asm volatile("v_wmma_scale_f32_16x16x128_f8f6f4 %0, %1, %2, %0, %3, %4"
               : "+v"(accumulator) : "v"(a[0]), "v"(b[0]), "v"(sa), "v"(sb));
  out[0] = accumulator;
}
#endif
