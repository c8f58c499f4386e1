// Routed (mixture-of-experts style) 4-bit GEMV: every thread owns one output
// column and caches that column's four expert code chunks (4 x 32 nibbles in
// 4 x uint4) in registers, then for each token picks the chunk its router
// chose at run time.  How the pick is written decides whether the cached
// chunks stay in registers or go to scratch memory:
//   MODE 0 (index):   c[route & 3]               LLVM 15 keeps the array in scratch
//   MODE 1 (select):  an unrolled compare-and-pick   registers everywhere
//   MODE 2 (scatter): per-expert partial sums written through the runtime
//                     index, combined afterwards      LLVM 15 uses scratch
#include "spw_device.h"

static __device__ inline float dot_nibbles(spw_u4 q, const float* __restrict__ x) {
  float acc = 0.0f;
#pragma unroll
  for (int w = 0; w < 4; ++w)
#pragma unroll
    for (int n = 0; n < 8; ++n) acc += (float)(int)((q[w] >> (4 * n)) & 15u) * x[w * 8 + n];
  return acc;
}

template <int MODE>
__global__ void SPW_LAUNCH_BOUNDS(256)
routed_gemv_q4(const spw_u4* __restrict__ chunks /* [cols][4] */, const float* __restrict__ scales /* [cols][4] */,
               const float* __restrict__ x /* [tokens][32] */, const int* __restrict__ route /* [tokens] */,
               float* __restrict__ out /* [tokens][cols] */, int tokens, int cols) {
  const int col = blockIdx.x * 256 + threadIdx.x;
  if (col >= cols) return;
  spw_u4 c[4];
  float s[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    c[e] = chunks[col * 4 + e];
    s[e] = scales[col * 4 + e];
  }
  if (MODE == 2) {
    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int t = 0; t < tokens; ++t) {
      const int sel = route[t] & 3;
      part[sel] += dot_nibbles(c[sel], x + t * 32);
      if ((t & 7) == 7 || t == tokens - 1) {  // flush a group of tokens
        out[(long)t * cols + col] = part[0] * s[0] + part[1] * s[1] + part[2] * s[2] + part[3] * s[3];
#pragma unroll
        for (int e = 0; e < 4; ++e) part[e] = 0.0f;
      }
    }
    return;
  }
  for (int t = 0; t < tokens; ++t) {
    const int sel = route[t] & 3;
    spw_u4 q;
    float scale;
    if (MODE == 0) {
      q = c[sel];
      scale = s[sel];
    } else {
      q = sel == 0 ? c[0] : sel == 1 ? c[1] : sel == 2 ? c[2] : c[3];
      scale = sel == 0 ? s[0] : sel == 1 ? s[1] : sel == 2 ? s[2] : s[3];
    }
    out[(long)t * cols + col] = scale * dot_nibbles(q, x + t * 32);
  }
}

template __global__ void routed_gemv_q4<0>(const spw_u4*, const float*, const float*, const int*, float*, int, int);
template __global__ void routed_gemv_q4<1>(const spw_u4*, const float*, const float*, const int*, float*, int, int);
template __global__ void routed_gemv_q4<2>(const spw_u4*, const float*, const float*, const int*, float*, int, int);

extern "C" hipError_t spw_launch_routed_gemv_q4(int mode, const void* chunks, const float* scales, const float* x,
                                                const int* route, float* out, int tokens, int cols,
                                                hipStream_t s) {
  const dim3 grid((cols + 255) / 256), block(256);
  const spw_u4* c = (const spw_u4*)chunks;
  switch (mode) {
    case 0: routed_gemv_q4<0><<<grid, block, 0, s>>>(c, scales, x, route, out, tokens, cols); break;
    case 1: routed_gemv_q4<1><<<grid, block, 0, s>>>(c, scales, x, route, out, tokens, cols); break;
    default: routed_gemv_q4<2><<<grid, block, 0, s>>>(c, scales, x, route, out, tokens, cols); break;
  }
  return hipSuccess;
}
