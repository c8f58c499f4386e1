// Fixtures for the ISA evidence oracle (issue 23): small kernels whose
// machine code has the features the decoder must classify on every
// generation.  HIP, compiled device-only with no HIP headers and no device
// libraries (-nogpuinc -nogpulib), so every clang from 19 on builds it
// (clang 19 accepts amdgpu_num_vgpr only on HIP/OpenCL kernels); build.sh
// has the exact commands.  What each kernel exercises:
//
//   spill_pressure   64 floats live across a clobber of v0-v31 under a
//                    40-VGPR limit: spill-slot stores and reloads (MUBUF on
//                    GFX8/9/10, scratch_* with architected flat scratch)
//   spill_in_loop    the same pressure inside a nested loop: spills in loops
//   agpr_spill       spill_pressure on targets with AGPRs, allowed to use
//                    them (an AGPR clobber): v_accvgpr_write/read copies
//   private_const    a volatile private array indexed by constants only
//   private_flat     the same through a generic pointer (flat_* reaching scratch)
//   private_dynamic  a private array indexed by the thread id (VGPR) and by
//                    a kernel argument (SGPR), in a loop
//   buffer_resource  MUBUF on an ordinary buffer resource (not scratch) beside
//                    a private array (clang with the buffer builtins)
//   lds_loop         LDS traffic and a barrier in a loop
//   calls            two calls of a non-inlined device function with its own
//                    dynamically indexed private array
//   dynamic_stack    alloca of a run-time size (uses_dynamic_stack; clang >= 20)
//   recursion        a recursive device function (stack of unknown size)
//   matrix           one MFMA (gfx908, gfx90a, gfx94x, gfx950) or WMMA
//                    (gfx11, gfx12, gfx1250) chain; absent elsewhere
//   mfma_spill       an MFMA chain accumulating in AGPRs (an AGPR clobber
//                    lets the kernel allocate them) beside spill_pressure's
//                    48 floats: accumulator moves and AGPR spill copies in one
//                    kernel (targets with AGPRs)
//   encodings        DPP (row_shr; DPP8 from GFX10 on) and packed 16-bit
//                    math (VOP3P where the target has it)
//   image_loads      MIMG loads, 1D and 2D (NSA from GFX10 on), on targets
//                    with image instructions (clang >= 22)
//   format_loads     inline-assembled buffer_load_format_x (MUBUF: scratch
//                    with no width when s[0:3] is the private segment buffer)
//                    and tbuffer_load_format_x (MTBUF: never scratch) on
//                    s[0:3], beside a private array (not gfx1250: no MUBUF)

#define KERNEL extern "C" __attribute__((global))
#define LIMIT_40_VGPRS __attribute__((amdgpu_num_vgpr(40)))
#define NOINLINE __attribute__((device, noinline))
#define LDS __attribute__((shared))

static inline __attribute__((device)) unsigned tid() { return __builtin_amdgcn_workitem_id_x(); }

// Every value held in v0-v31 must move elsewhere across this statement.
#define CLOBBER_V0_V31                                                              \
  asm volatile("" ::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9",   \
               "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18",       \
               "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27",       \
               "v28", "v29", "v30", "v31")

#if defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || \
    defined(__gfx942__) || defined(__gfx950__) || defined(__gfx9_4_generic__)
#define HAS_AGPRS 1
#define HAS_MFMA 1
#endif
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1150__) || \
    defined(__gfx1151__) || defined(__gfx11_generic__)
#define HAS_WMMA_GFX11 1
#endif
#if defined(__gfx1200__) || defined(__gfx1201__) || defined(__gfx12_generic__)
#define HAS_WMMA_GFX12 1
#endif
#if defined(__gfx1250__)
#define HAS_WMMA_GFX1250 1
#endif

KERNEL LIMIT_40_VGPRS void spill_pressure(float* a) {
  float v[64];
#pragma unroll
  for (int i = 0; i < 64; i++) v[i] = a[i * tid()];
  CLOBBER_V0_V31;
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; i++) s += v[i] * v[63 - i];
  a[tid()] = s;
}

KERNEL LIMIT_40_VGPRS void spill_in_loop(float* a, const float* b, int n, int m) {
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; i++) v[i] = b[i * tid()];
  for (int o = 0; o < n; o++) {
    for (int j = 0; j < m; j++) {
      CLOBBER_V0_V31;
      float w = b[o * m + j];
#pragma unroll
      for (int i = 0; i < 48; i++) v[i] = v[i] * w + v[(i + 7) % 48];
    }
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < 48; i++) s += v[i];
  a[tid()] = s;
}

#if HAS_AGPRS
KERNEL LIMIT_40_VGPRS void agpr_spill(float* a) {
  float v[64];
#pragma unroll
  for (int i = 0; i < 64; i++) v[i] = a[i * tid()];
  asm volatile("" ::: "a39");  // the kernel may use 40 AGPRs: values move there before memory
  CLOBBER_V0_V31;
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; i++) s += v[i] * v[63 - i];
  a[tid()] = s;
}
#endif

// Volatile accesses through a private (address space 5) pointer: the array
// stays in scratch, addressed by constants only (it looks like spill slots).
typedef __attribute__((address_space(5))) volatile int private_int;
KERNEL void private_const(int* out, int x) {
  int buf[16];
  private_int* p = (private_int*)buf;
#pragma unroll
  for (int i = 0; i < 16; i++) p[i] = x + i;
  int s = 0;
#pragma unroll
  for (int i = 0; i < 16; i++) s += p[15 - i] * i;
  out[tid()] = s;
}

// The same through a generic pointer: flat_* instructions that reach scratch.
KERNEL void private_flat(int* out, int x) {
  volatile int buf[16];
#pragma unroll
  for (int i = 0; i < 16; i++) buf[i] = x + i;
  int s = 0;
#pragma unroll
  for (int i = 0; i < 16; i++) s += buf[15 - i] * i;
  out[tid()] = s;
}

// 96 ints: too many to promote to registers, so the array stays in scratch.
KERNEL void private_dynamic(int* out, const int* in, int x, int n) {
  int buf[96];
  for (int i = 0; i < 96; i++) buf[i] = in[i * tid()];
  for (int k = 0; k < n; k++) buf[(tid() + k) % 96] += buf[(x + k) % 96];
  out[tid()] = buf[x % 96] + buf[tid() % 96];
}

KERNEL void lds_loop(float* out, const float* in, int n) {
  static LDS float tile[256];
  float acc = 0;
  for (int k = 0; k < n; k++) {
    tile[tid() & 255] = in[k * 256 + (tid() & 255)];
    __builtin_amdgcn_s_barrier();
    for (int j = 0; j < 8; j++) acc += tile[(tid() + j * 32) & 255];
    __builtin_amdgcn_s_barrier();
  }
  out[tid()] = acc;
}

#if __has_builtin(__builtin_amdgcn_make_buffer_rsrc) && __has_builtin(__builtin_amdgcn_raw_buffer_load_b32)
// MUBUF loads and stores on an ordinary buffer resource made from an argument,
// beside a dynamically indexed private array: only the latter is scratch.
KERNEL void buffer_resource(int* out, int* in, int n) {
  __amdgpu_buffer_rsrc_t rsrc = __builtin_amdgcn_make_buffer_rsrc(in, 0, n * 4, 0x00020000);
  int buf[96];
  for (int i = 0; i < 96; i++) buf[i] = __builtin_amdgcn_raw_buffer_load_b32(rsrc, 4 * (i + tid()), 0, 0);
  int s = 0;
  for (int k = 0; k < n; k++) {
    s += buf[(tid() + k) % 96];
    __builtin_amdgcn_raw_buffer_store_b32(s, rsrc, 4 * k, 0, 0);
  }
  out[tid()] = s;
}
#endif

NOINLINE float helper(const float* p, int n) {
  float local[80];
  for (int i = 0; i < 80; i++) local[i] = p[i * n];
  return local[n % 80] + local[(n + 3) % 80];
}

KERNEL void calls(float* a, int n) {
  a[tid()] = helper(a, n) + helper(a + 8, n + 1);
}

#if __clang_major__ >= 20   // LLVM 19: "unsupported dynamic alloca"
KERNEL void dynamic_stack(int* out, int n) {
  int* p = (int*)__builtin_alloca(sizeof(int) * (unsigned)(n & 63));
  for (int i = 0; i < (n & 63); i++) p[i] = i * (int)tid();
  out[tid()] = p[(n + tid()) & 63 % ((n & 63) | 1)];
}
#endif

NOINLINE int recurse(const int* p, int depth) {
  int local[4];
#pragma unroll
  for (int i = 0; i < 4; i++) local[i] = p[i] + depth;
  if (depth <= 0) return local[depth & 3];
  return recurse(p + 1, depth - 1) + local[(depth + 1) & 3];
}

KERNEL void recursion(int* out, const int* in, int depth) {
  out[tid()] = recurse(in, depth);
}

#if HAS_MFMA
typedef float v4f __attribute__((ext_vector_type(4)));
KERNEL void matrix(v4f* out, const float* a, const float* b, int n) {
  v4f acc = {0, 0, 0, 0};
  for (int k = 0; k < n; k++)
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a[k * 64 + tid()], b[k * 64 + tid()], acc, 0, 0, 0);
  out[tid()] = acc;
}

typedef float v16f __attribute__((ext_vector_type(16)));
typedef _Float16 v4h __attribute__((ext_vector_type(4)));
KERNEL LIMIT_40_VGPRS void mfma_spill(v16f* out, float* a, const v4h* x, const v4h* y, int n) {
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; i++) v[i] = a[i * tid()];
  asm volatile("" ::: "a63");  // the kernel may use 64 AGPRs
  v16f acc = {};
  for (int k = 0; k < n; k++)
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(x[k * 64 + tid()], y[k * 64 + tid()], acc, 0, 0, 0);
  CLOBBER_V0_V31;
  float s = 0;
#pragma unroll
  for (int i = 0; i < 48; i++) s += v[i] * v[47 - i];
  a[tid()] = s;
  asm volatile("" ::"a"(acc));  // the accumulator stays in its AGPRs to here
  out[tid()] = acc;
}
#elif HAS_WMMA_GFX11 || HAS_WMMA_GFX12 || HAS_WMMA_GFX1250
typedef float v8f __attribute__((ext_vector_type(8)));
#if HAS_WMMA_GFX11 || HAS_WMMA_GFX1250
typedef _Float16 vh __attribute__((ext_vector_type(16)));
#else
typedef _Float16 vh __attribute__((ext_vector_type(8)));
#endif
KERNEL void matrix(v8f* out, const vh* a, const vh* b, int n) {
  v8f acc = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < n; k++) {
#if HAS_WMMA_GFX11
    acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[k * 32 + tid()], b[k * 32 + tid()], acc);
#elif HAS_WMMA_GFX12
    acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[k * 32 + tid()], b[k * 32 + tid()], acc);
#else
    acc = __builtin_amdgcn_wmma_f32_16x16x32_f16(false, a[k * 32 + tid()], false, b[k * 32 + tid()], (short)0,
                                                 acc, false, false);
#endif
  }
  out[tid()] = acc;
}
#endif

typedef _Float16 half2 __attribute__((ext_vector_type(2)));
KERNEL void encodings(int* out, const int* in, half2* h) {
  int v = in[tid()];
  v += __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false);   // row_shr:1
#if !defined(__GFX8__) && !defined(__GFX9__)
  v += __builtin_amdgcn_mov_dpp8(v, 0x688);
#endif
  half2 a = h[tid()], b = h[tid() + 64];
  h[tid()] = a * b + a;
  out[tid()] = v;
}

#if __clang_major__ >= 22 && !defined(__gfx940__) && !defined(__gfx941__) && !defined(__gfx942__) && \
    !defined(__gfx950__) && !defined(__gfx9_4_generic__) && !defined(__gfx1250__)
typedef float v4f_image __attribute__((ext_vector_type(4)));
KERNEL void image_loads(v4f_image* out, __amdgpu_texture_t line, __amdgpu_texture_t plane, int y) {
  int x = (int)tid();
  v4f_image a = __builtin_amdgcn_image_load_1d_v4f32_i32(15, x, line, 0, 0);
  v4f_image b = __builtin_amdgcn_image_load_2d_v4f32_i32(15, y, x * 3, plane, 0, 0);
  out[tid()] = a + b;
}
#endif

#if !defined(__gfx1250__)
#if defined(__GFX12__)
#define SOFFSET "null"
#else
#define SOFFSET "0"
#endif
KERNEL void format_loads(float* out, const int* in, int x) {
  int buf[96];
  for (int i = 0; i < 96; i++) buf[i] = in[i * tid()];
  float f, g;
  asm volatile("buffer_load_format_x %0, off, s[0:3], " SOFFSET : "=v"(f));
  asm volatile("tbuffer_load_format_x %0, off, s[0:3], " SOFFSET : "=v"(g));
  out[tid()] = f + g + (float)buf[(x + tid()) % 96];
}
#endif
