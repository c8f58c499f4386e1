// K-quant dequantising GEMM: Q4_K weights x Q8_1 activations -> fp32, the
// quantised matmul of llama.cpp-style engines (MMQ).
//
// Q4_K: super-blocks of 256 weights = 8 sub-blocks of 32, each with a 6-bit
// scale and a 6-bit min packed into 12 bytes, two fp16 super-scales, and 128
// bytes of nibbles.  Q8_1: blocks of 32 int8 with an fp16 scale d and
// s = d * sum(q).  For weight row r, token t and sub-block b:
//   out[t][r] += d_r*sc_rb * d_tb * dot(q4_rb, q8_tb)  -  dmin_r*m_rb * s_tb
// The int8 dot products run on the matrix unit (spw_mma.h); every sub-block
// result is scaled into fp32 accumulators, so each lane holds both int32
// tile results and fp32 sums: register pressure grows quickly with the tile.
#include "spw_mma.h"

struct block_q4_K {
  spw_half d, dmin;
  unsigned char scales[12];
  unsigned char qs[128];
};
struct block_q8_1 {
  spw_half d, s;
  signed char qs[32];
};

static __device__ inline void q4k_scale_min(int j, const unsigned char* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

template <int BM, int BN, int NT>
__global__ void SPW_LAUNCH_BOUNDS(NT)
mul_mat_q4_K(const block_q4_K* __restrict__ w /* [rows][K/256] */, const block_q8_1* __restrict__ x /* [tokens][K/32] */,
             float* __restrict__ out /* [tokens][rows] */, int rows, int tokens, int K) {
  constexpr int KC = 64;  // k per staging step: two sub-blocks of one super-block
  __shared__ __attribute__((aligned(16))) signed char sw[BM * KC];
  __shared__ __attribute__((aligned(16))) signed char sx[BN * KC];
  __shared__ float w_scale[BM][2], w_min[BM][2], x_scale[BN][2], x_sum[BN][2];

  const int tid = threadIdx.x;
  const int r0 = blockIdx.y * BM, t0 = blockIdx.x * BN;
  const int nsb = K / 256;

  // Unpack one 64-wide chunk (j = 0..3) of super-block s into LDS.
  auto stage = [&](int s, int j) {
    for (int i = tid; i < BM * 8; i += NT) {  // 8 threads per row, 4 bytes of nibbles each
      const int row = i / 8, part = i % 8;
      const block_q4_K* b = &w[(long)(r0 + row) * nsb + s];
      const unsigned q = *(const unsigned*)&b->qs[32 * j + 4 * part];
      const unsigned lo = q & 0x0F0F0F0Fu, hi = (q >> 4) & 0x0F0F0F0Fu;
      *(unsigned*)&sw[row * KC + 4 * part] = lo;        // sub-block 2j
      *(unsigned*)&sw[row * KC + 32 + 4 * part] = hi;   // sub-block 2j+1
      if (part < 2) {
        int sc, m;
        q4k_scale_min(2 * j + part, b->scales, sc, m);
        w_scale[row][part] = (float)b->d * sc;
        w_min[row][part] = (float)b->dmin * m;
      }
    }
    for (int i = tid; i < BN * 16; i += NT) {  // 16 threads per token row, 4 bytes each
      const int row = i / 16, part = i % 16;
      const block_q8_1* b = &x[(long)(t0 + row) * (K / 32) + s * 8 + 2 * j + part / 8];
      *(int*)&sx[row * KC + 4 * part] = *(const int*)&b->qs[4 * (part % 8)];
      if (part % 8 == 0) {
        x_scale[row][part / 8] = (float)b->d;
        x_sum[row][part / 8] = (float)b->s;
      }
    }
  };

#if SPW_MMA
  constexpr int WAVES = NT / SPW_WAVE;
  constexpr int WM = 2, WN = WAVES / 2 > 0 ? WAVES / 2 : 1;
  constexpr int TM = BM / WM / 16, TN = BN / WN / 16;
  const int lane = tid % SPW_WAVE, wave = tid / SPW_WAVE;
  const int wm = wave % WM, wn = wave / WM;
  float acc[TM][TN][SPW_MMA_ACC];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int r = 0; r < SPW_MMA_ACC; ++r) acc[i][j][r] = 0.0f;

  for (int s = 0; s < nsb; ++s) {
    for (int j = 0; j < 4; ++j) {
      stage(s, j);
      __syncthreads();
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // one sub-block of 32
        spw_mma_acc dot[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int n = 0; n < TN; ++n) dot[i][n] = spw_mma_zero();
#pragma unroll
        for (int kk = 0; kk < 32; kk += SPW_MMA_K) {
          spw_mma_operand a[TM], b[TN];
#pragma unroll
          for (int i = 0; i < TM; ++i) a[i] = spw_mma_load(&sw[(wm * TM * 16 + i * 16) * KC], KC, half * 32 + kk, lane);
#pragma unroll
          for (int n = 0; n < TN; ++n) b[n] = spw_mma_load(&sx[(wn * TN * 16 + n * 16) * KC], KC, half * 32 + kk, lane);
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int n = 0; n < TN; ++n) dot[i][n] = spw_mma_step(a[i], b[n], dot[i][n]);
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int n = 0; n < TN; ++n) {
            const int col = wn * TN * 16 + n * 16 + spw_mma_col(lane);
            const float xd = x_scale[col][half], xs = x_sum[col][half];
#pragma unroll
            for (int r = 0; r < SPW_MMA_ACC; ++r) {
              const int row = wm * TM * 16 + i * 16 + spw_mma_row(lane, r);
              acc[i][n][r] += w_scale[row][half] * xd * (float)dot[i][n][r] - w_min[row][half] * xs;
            }
          }
      }
      __syncthreads();
    }
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int n = 0; n < TN; ++n)
#pragma unroll
      for (int r = 0; r < SPW_MMA_ACC; ++r) {
        const int row = r0 + wm * TM * 16 + i * 16 + spw_mma_row(lane, r);
        const int col = t0 + wn * TN * 16 + n * 16 + spw_mma_col(lane);
        out[(long)col * rows + row] = acc[i][n][r];
      }
#else
  // No matrix unit: one output element at a time (untuned).
  for (int e = tid; e < BM * BN; e += NT) {
    const int row = e % BM, col = e / BM;
    out[(long)(t0 + col) * rows + r0 + row] = 0.0f;
  }
  for (int s = 0; s < nsb; ++s)
    for (int j = 0; j < 4; ++j) {
      stage(s, j);
      __syncthreads();
#pragma unroll 1
      for (int e = tid; e < BM * BN; e += NT) {
        const int row = e % BM, col = e / BM;
        float sum = 0.0f;
#pragma unroll 1
        for (int half = 0; half < 2; ++half) {
          int dot = 0;
#pragma unroll 1
          for (int k = 0; k < 32; ++k) dot += sw[row * KC + half * 32 + k] * sx[col * KC + half * 32 + k];
          sum += w_scale[row][half] * x_scale[col][half] * dot - w_min[row][half] * x_sum[col][half];
        }
        out[(long)(t0 + col) * rows + r0 + row] += sum;
      }
      __syncthreads();
    }
#endif
}

#define SPW_MMQ(BM, BN, NT)                                                                              \
  template __global__ void mul_mat_q4_K<BM, BN, NT>(const block_q4_K*, const block_q8_1*, float*, int, int, \
                                                    int);                                                   \
  extern "C" hipError_t spw_launch_mul_mat_q4_K_##BM##x##BN(const void* w, const void* x, float* out,     \
                                                           int rows, int tokens, int k, hipStream_t s) {    \
    mul_mat_q4_K<BM, BN, NT><<<dim3(tokens / BN, rows / BM), dim3(NT), 0, s>>>(                           \
        (const block_q4_K*)w, (const block_q8_1*)x, out, rows, tokens, k);                               \
    return hipSuccess;                                                                                               \
  }

SPW_MMQ(64, 64, 128)    // small batches
SPW_MMQ(128, 64, 128)   // prompt processing
SPW_MMQ(128, 128, 128)  // the big tile: fp32 sums + int32 tiles no longer fit everywhere
