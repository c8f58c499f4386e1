// Shared device helpers for the matrix kernels (kernels/*.hip).  Builds on
// mini_hip.h, so it needs no HIP headers and no device libraries: every Debian
// clang (15, 16, 19, 22) compiles it for every target it knows.
#pragma once

#include "mini_hip.h"

typedef int spw_v4i __attribute__((ext_vector_type(4)));
typedef int spw_v8i __attribute__((ext_vector_type(8)));
typedef float spw_v8f __attribute__((ext_vector_type(8)));
typedef unsigned int spw_u4 __attribute__((ext_vector_type(4)));
typedef _Float16 spw_half;

// Wave size: clang 22 no longer predefines __AMDGCN_WAVEFRONT_SIZE, so derive
// it from the family (GFX9 data-centre parts run wave64, gfx10+ wave32 here).
#if defined(__GFX9__)
#define SPW_WAVE 64
#else
#define SPW_WAVE 32
#endif

// The WMMA path: RDNA3 / RDNA3.5 (gfx11xx) only.  Every other target gets the
// portable fallback in the same kernel, so gfx90a/gfx942 builds still compile
// and still have something register-hungry to measure.
#if defined(__GFX11__)
#define SPW_HAS_WMMA_GFX11 1
#else
#define SPW_HAS_WMMA_GFX11 0
#endif

// Launch bounds of every matrix kernel.  -DSPW_MIN_WAVES_PER_EU=N adds
// amdgpu_waves_per_eu(N): the compiler must then fit N waves per SIMD, which
// lowers the register budget of every kernel (an engine's occupancy knob; the
// matrix tests use it to push a build over its baseline).
#ifdef SPW_MIN_WAVES_PER_EU
#define SPW_LAUNCH_BOUNDS(n) __launch_bounds__(n) __attribute__((amdgpu_waves_per_eu(SPW_MIN_WAVES_PER_EU)))
#else
#define SPW_LAUNCH_BOUNDS(n) __launch_bounds__(n)
#endif

static __device__ inline int spw_lane() {
#if SPW_WAVE == 64
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
#else
  return __builtin_amdgcn_mbcnt_lo(~0u, 0u);
#endif
}

// Butterfly sum over one wave.
static __device__ inline float spw_wave_sum(float v) {
#pragma unroll
  for (int mask = SPW_WAVE / 2; mask > 0; mask >>= 1) v += __shfl_xor_f(v, mask);
  return v;
}

static __device__ inline float spw_wave_max(float v) {
#pragma unroll
  for (int mask = SPW_WAVE / 2; mask > 0; mask >>= 1) v = __builtin_fmaxf(v, __shfl_xor_f(v, mask));
  return v;
}

// Sum over the whole work-group through LDS; every thread gets the result.
template <int NT>
static __device__ inline float spw_block_sum(float v, float* scratch /* NT/32 floats in LDS */) {
  v = spw_wave_sum(v);
  constexpr int waves = NT / SPW_WAVE > 0 ? NT / SPW_WAVE : 1;
  const int wave = threadIdx.x / SPW_WAVE;
  if (spw_lane() == 0) scratch[wave] = v;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < waves; ++w) total += scratch[w];
  __syncthreads();
  return total;
}

static __device__ inline float spw_rsqrt(float x) { return __builtin_amdgcn_rsqf(x); }

static __device__ inline float spw_exp(float x) { return __builtin_exp2f(x * 1.44269504f); }
