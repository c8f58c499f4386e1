// LLM-style kernels whose resource usage differs between clang versions on
// gfx1100 (toolchains-debian.md section 3): used by spillway's gate tests.
#include "mini_hip.h"

typedef __fp16 half;
typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef unsigned int v4u __attribute__((ext_vector_type(4)));

// (c) RMSNorm with the whole row held in fp32 registers.
template <int HIDDEN, int NT, int MAXT>
__global__ __launch_bounds__(MAXT) void rmsnorm(const half *__restrict__ x, const half *__restrict__ w,
                                                half *__restrict__ y, float eps) {
  constexpr int PER = HIDDEN / NT;
  __shared__ float partial[32];
  const half *row = x + (unsigned long)blockIdx.x * HIDDEN;
  float v[PER];
  float ss = 0.f;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    v[i] = (float)row[threadIdx.x + i * NT];
    ss += v[i] * v[i];
  }
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) ss += __shfl_xor_f(ss, m);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = 0.f;
  for (int i = 0; i < NT / 32; ++i) total += partial[i];
  float r = __builtin_amdgcn_rsqf(total / HIDDEN + eps);
  half *out = y + (unsigned long)blockIdx.x * HIDDEN;
#pragma unroll
  for (int i = 0; i < PER; ++i) out[threadIdx.x + i * NT] = (half)(v[i] * r * (float)w[threadIdx.x + i * NT]);
}

template __global__ void rmsnorm<4096, 256, 256>(const half *, const half *, half *, float);
template __global__ void rmsnorm<16384, 256, 256>(const half *, const half *, half *, float);
template __global__ void rmsnorm<16384, 128, 128>(const half *, const half *, half *, float);
template __global__ void rmsnorm<32768, 128, 128>(const half *, const half *, half *, float);

// (d) per-thread sorted top-K list with runtime-indexed insertion.
template <int K>
__global__ __launch_bounds__(256) void topk(const float *__restrict__ logits, int n, float *__restrict__ vals,
                                             int *__restrict__ idx) {
  float best[K];
  int where[K];
#pragma unroll
  for (int i = 0; i < K; ++i) { best[i] = -1e30f; where[i] = -1; }
  int base = blockIdx.x * n;
  for (int j = threadIdx.x; j < n; j += 256) {
    float v = logits[base + j];
    if (v > best[K - 1]) {
      int p = K - 1;
      while (p > 0 && best[p - 1] < v) { best[p] = best[p - 1]; where[p] = where[p - 1]; --p; }
      best[p] = v;
      where[p] = j;
    }
  }
  int o = (blockIdx.x * 256 + threadIdx.x) * K;
#pragma unroll
  for (int i = 0; i < K; ++i) { vals[o + i] = best[i]; idx[o + i] = where[i]; }
}

template __global__ void topk<8>(const float *, int, float *, int *);
template __global__ void topk<32>(const float *, int, float *, int *);

// (b) 4-bit dequant picking one of four uint4 chunks through a runtime index.
__global__ __launch_bounds__(256) void select_chunk_index(const v4u *__restrict__ q, const unsigned *__restrict__ sel,
                                                           float *__restrict__ out, float scale) {
  int t = blockIdx.x * 256 + threadIdx.x;
  v4u c[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) c[i] = q[t * 4 + i];
  v4u pick = c[sel[t] & 3];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int b = 0; b < 8; ++b) out[t * 32 + i * 8 + b] = (float)((pick[i] >> (4 * b)) & 15u) * scale - 8.f * scale;
}

// Spill-free everywhere, no scratch: a control.
__global__ __launch_bounds__(256) void silu_mul(const float *__restrict__ a, const float *__restrict__ b,
                                                float *__restrict__ out, int n) {
  int t = blockIdx.x * 256 + threadIdx.x;
  if (t < n) {
    float x = a[t];
    out[t] = x / (1.f + __builtin_expf(-x)) * b[t];
  }
}

// (d) per-thread 256-bin private histogram: scratch on every compiler.
__global__ __launch_bounds__(256) void byte_histogram(const unsigned char *__restrict__ data, int n,
                                                      unsigned *__restrict__ hist) {
  unsigned h[256];
  for (int i = 0; i < 256; ++i) h[i] = 0;
  for (int j = blockIdx.x * 256 + threadIdx.x; j < n; j += 256 * 1024) h[data[j]]++;
  for (int i = 0; i < 256; ++i)
    if (h[i]) __hip_atomic_fetch_add(hist + i, h[i], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

// (a) int8 GEMM C = A * B^T on gfx11 WMMA, double-buffered LDS slabs; each
// wave owns (BM/WM) x (BN/WN) of C as 16x16 tiles (8 accumulator VGPRs each).
template <int BM, int BN, int BK, int WM, int WN, int MAXT>
__global__ __launch_bounds__(MAXT) void gemm_i8(const signed char *__restrict__ A, const signed char *__restrict__ B,
                                                int *__restrict__ C, int N, int K) {
  constexpr int NTH = WM * WN * 32;
  constexpr int TM = BM / WM / 16, TN = BN / WN / 16;
  __shared__ __attribute__((aligned(16))) signed char As[2][BM * BK];
  __shared__ __attribute__((aligned(16))) signed char Bs[2][BN * BK];
  const int wave = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wm = wave % WM, wn = wave / WM;
  const signed char *Ab = A + (unsigned long)blockIdx.y * BM * K;
  const signed char *Bb = B + (unsigned long)blockIdx.x * BN * K;
  v8i acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = (v8i){0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = threadIdx.x; i < BM * BK / 16; i += NTH)
    *(v4i *)&As[0][i * 16] = *(const v4i *)&Ab[(i / (BK / 16)) * K + (i % (BK / 16)) * 16];
  for (int i = threadIdx.x; i < BN * BK / 16; i += NTH)
    *(v4i *)&Bs[0][i * 16] = *(const v4i *)&Bb[(i / (BK / 16)) * K + (i % (BK / 16)) * 16];
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    if (k0 + BK < K) {
      for (int i = threadIdx.x; i < BM * BK / 16; i += NTH)
        *(v4i *)&As[buf ^ 1][i * 16] = *(const v4i *)&Ab[(i / (BK / 16)) * K + k0 + BK + (i % (BK / 16)) * 16];
      for (int i = threadIdx.x; i < BN * BK / 16; i += NTH)
        *(v4i *)&Bs[buf ^ 1][i * 16] = *(const v4i *)&Bb[(i / (BK / 16)) * K + k0 + BK + (i % (BK / 16)) * 16];
    }
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      v4i a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = *(const v4i *)&As[buf][((wm * TM + i) * 16 + (lane & 15)) * BK + kk];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = *(const v4i *)&Bs[buf][((wn * TN + j) * 16 + (lane & 15)) * BK + kk];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, a[i], true, b[j], acc[i][j], false);
    }
    __syncthreads();
    buf ^= 1;
  }
  int *Cb = C + (unsigned long)blockIdx.y * BM * N + blockIdx.x * BN;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int r = 0; r < 8; ++r)
        Cb[((wm * TM + i) * 16 + r * 2 + (lane >> 4)) * N + (wn * TN + j) * 16 + (lane & 15)] = acc[i][j][r];
}

template __global__ void gemm_i8<128, 64, 32, 2, 2, 128>(const signed char *, const signed char *, int *, int, int);
template __global__ void gemm_i8<128, 128, 32, 2, 2, 128>(const signed char *, const signed char *, int *, int, int);

#if defined(GATE_EXTRA)
// Kernels that exist in one build only (compiled with -DGATE_EXTRA): a clean
// one, and one that arrives with a runtime-indexed private table in scratch.
__global__ __launch_bounds__(256) void extra_scale(float *__restrict__ p, float s) {
  p[blockIdx.x * 256 + threadIdx.x] *= s;
}

__global__ __launch_bounds__(256) void extra_private_table(const int *__restrict__ in, int *__restrict__ out) {
  int t = blockIdx.x * 256 + threadIdx.x;
  int table[48];
  for (int i = 0; i < 48; ++i) table[i] = in[t + i * 4096];
  out[t] = table[in[t] % 48] + table[(in[t] >> 8) % 48];
}
#endif
