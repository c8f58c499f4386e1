// Shared device helpers for the matrix kernels (kernels/*.hip).  Builds on
// mini_hip.h, so it needs no HIP headers and no device libraries: every Debian
// clang (15, 16, 19, 22, 23, 24) compiles it for every target it knows.  With
// -DSPW_HIP_RUNTIME=1 (matrix/compile.sh, for cells with `hip = "rocm"`) it
// builds on ROCm's real <hip/hip_runtime.h> instead: one source tree, both ways.
#pragma once

#if defined(SPW_HIP_RUNTIME) && SPW_HIP_RUNTIME
#include <hip/hip_runtime.h>
#else
#include "mini_hip.h"
#endif

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

// Lane `lane ^ mask`'s value (ds_bpermute), as HIP's __shfl_xor without HIP's headers.
static __device__ inline float spw_shfl_xor(float v, int mask) {
  int lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  int src = (lane ^ mask) << 2;
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(src, __builtin_bit_cast(int, v)));
}

// Bit n set when lane n's predicate holds (a wave-wide ballot; 64-bit on wave32 too).
// LLVM 16 and later: __builtin_amdgcn_ballot_w32 / _w64, whichever fits the wave.
// LLVM 15 has neither and only __builtin_amdgcn_uicmp, which LLVM 24 deprecates.
static __device__ inline unsigned long long spw_ballot(bool predicate) {
#if !defined(__HIP_DEVICE_COMPILE__)
  return predicate;  // the host pass parses device functions but never runs them
#elif SPW_WAVE == 64 && __has_builtin(__builtin_amdgcn_ballot_w64)
  return __builtin_amdgcn_ballot_w64(predicate);
#elif SPW_WAVE == 32 && __has_builtin(__builtin_amdgcn_ballot_w32)
  return __builtin_amdgcn_ballot_w32(predicate);
#else
  return __builtin_amdgcn_uicmp(predicate ? 1u : 0u, 0u, 33 /* ICMP_NE */);
#endif
}

// Relaxed atomic add at device (agent) scope.  Clang 19 and later spell it
// __scoped_atomic_fetch_add (LLVM 24 deprecates __hip_atomic_fetch_add);
// clang 15 and 16 know only the __hip_ form.
static __device__ inline unsigned spw_atomic_add_device(unsigned* address, unsigned value) {
#if __has_builtin(__scoped_atomic_fetch_add)
  return __scoped_atomic_fetch_add(address, value, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
#else
  return __hip_atomic_fetch_add(address, value, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
#endif
}

// Butterfly sum over one wave.
static __device__ inline float spw_wave_sum(float v) {
#pragma unroll
  for (int mask = SPW_WAVE / 2; mask > 0; mask >>= 1) v += spw_shfl_xor(v, mask);
  return v;
}

static __device__ inline float spw_wave_max(float v) {
#pragma unroll
  for (int mask = SPW_WAVE / 2; mask > 0; mask >>= 1) v = __builtin_fmaxf(v, spw_shfl_xor(v, mask));
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
