// One int8 matrix-multiply step on a 16x16 output tile, per architecture:
//   gfx11 (wave32): v_wmma_i32_16x16x16_iu8, 8 int32 accumulators per lane
//   gfx90a (wave64): v_mfma_i32_16x16x16i8,  4 accumulators per lane (AGPRs)
//   gfx942 (wave64): v_mfma_i32_16x16x32_i8, 4 accumulators per lane
// Anything else has no matrix unit here (SPW_MMA == 0); kernels fall back to
// scalar code there.
#pragma once

#include "spw_device.h"

#if defined(__GFX11__)
#define SPW_MMA 1
#define SPW_MMA_K 16    // k per instruction
#define SPW_MMA_ACC 8   // accumulators per lane per tile
typedef spw_v8i spw_mma_acc;
typedef spw_v4i spw_mma_operand;
// Operand rows: lane % 16; both half-waves carry the same 16 bytes of k.
static __device__ inline int spw_mma_koffset(int) { return 0; }
static __device__ inline int spw_mma_row(int lane, int r) { return 2 * r + lane / 16; }
static __device__ inline spw_mma_acc spw_mma_step(spw_mma_operand a, spw_mma_operand b, spw_mma_acc c) {
  return __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, a, true, b, c, false);
}
#elif defined(__gfx90a__) || defined(__gfx942__)
#define SPW_MMA 1
#define SPW_MMA_ACC 4
typedef spw_v4i spw_mma_acc;
#if defined(__gfx942__)
#define SPW_MMA_K 32
typedef long spw_mma_operand;
#else
#define SPW_MMA_K 16
typedef int spw_mma_operand;
#endif
// Lanes 16*g .. 16*g+15 carry k = g*(K/4) .. g*(K/4) + K/4 - 1.
static __device__ inline int spw_mma_koffset(int lane) { return (lane / 16) * (SPW_MMA_K / 4); }
static __device__ inline int spw_mma_row(int lane, int r) { return 4 * (lane / 16) + r; }
static __device__ inline spw_mma_acc spw_mma_step(spw_mma_operand a, spw_mma_operand b, spw_mma_acc c) {
#if defined(__gfx942__)
  return __builtin_amdgcn_mfma_i32_16x16x32_i8(a, b, c, 0, 0, 0);
#else
  return __builtin_amdgcn_mfma_i32_16x16x16i8(a, b, c, 0, 0, 0);
#endif
}
#else
#define SPW_MMA 0
#endif

#if SPW_MMA
static __device__ inline int spw_mma_col(int lane) { return lane % 16; }
static __device__ inline spw_mma_acc spw_mma_zero() {
  spw_mma_acc z;
#pragma unroll
  for (int i = 0; i < SPW_MMA_ACC; ++i) z[i] = 0;
  return z;
}
// The operand for a 16-row tile whose row r (r = lane % 16) starts at
// rows + r * stride, at depth k.
static __device__ inline spw_mma_operand spw_mma_load(const signed char* rows, int stride, int k, int lane) {
  return *(const spw_mma_operand*)(rows + (lane % 16) * stride + k + spw_mma_koffset(lane));
}
#endif
