// The synthetic library of benchmarks/bench_lines.py: template kernels in the
// shapes of a sparse/dense linear algebra library (CSR products with wave
// reductions, LDS-tiled GEMM with unrolled register tiles, block scans,
// bitonic sorts, private-array stencils), instantiated over types and sizes,
// built with -gline-tables-only.  VARIANT (0, 1, ...) changes constants so
// each variant's code differs.
#include "ops.h"

#ifndef VARIANT
#define VARIANT 0
#endif

template <typename T, typename I, int BLOCK, int WF>
KERNEL void csrmv_vector(I rows, const I* __restrict__ ptr, const I* __restrict__ col, const T* __restrict__ val,
                         const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
  I row = (I)(group() * (BLOCK / WF) + lane() / WF);
  if (row >= rows) return;
  T sum = 0;
  for (I j = ptr[row] + (I)(lane() % WF); j < ptr[row + 1]; j += WF) sum = fma_of(val[j], x[col[j]], sum);
  sum = wave_sum<WF>(sum);
  if (lane() % WF == 0) y[row] = beta != T(0) ? fma_of(alpha, sum, beta * y[row]) : alpha * sum;
}

template <typename T, int TM, int TN, int TK>
KERNEL void gemm_tile(int m, int n, int k, const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c) {
  static LDS T ta[TK][TM * 16];
  static LDS T tb[TK][TN * 16];
  T acc[TM][TN] = {};
  int tx = (int)lane() % 16, ty = (int)lane() / 16;
  for (int kk = 0; kk < k; kk += TK) {
#pragma unroll
    for (int i = 0; i < TM; i++) ta[ty % TK][i * 16 + tx] = a[(i * 16 + tx) * k + kk + ty % TK];
#pragma unroll
    for (int j = 0; j < TN; j++) tb[ty % TK][j * 16 + tx] = b[(kk + ty % TK) * n + j * 16 + tx];
    barrier();
#pragma unroll
    for (int p = 0; p < TK; p++) {
#pragma unroll
      for (int i = 0; i < TM; i++) {
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = fma_of(ta[p][i * 16 + tx], tb[p][j * 16 + ty], acc[i][j]);
      }
    }
    barrier();
  }
#pragma unroll
  for (int i = 0; i < TM; i++) {
#pragma unroll
    for (int j = 0; j < TN; j++) c[(i * 16 + tx) * n + j * 16 + ty] = acc[i][j] + T(VARIANT);
  }
}

template <typename T, int BLOCK>
KERNEL void block_scan(int n, const T* __restrict__ in, T* __restrict__ out) {
  static LDS T buffer[BLOCK];
  int i = (int)(group() * BLOCK + lane());
  T v = i < n ? in[i] : T(0);
  buffer[lane()] = v;
  barrier();
#pragma unroll
  for (int offset = 1; offset < BLOCK; offset *= 2) {
    T add = lane() >= (unsigned)offset ? buffer[lane() - offset] : T(0);
    barrier();
    buffer[lane()] += add;
    barrier();
  }
  if (i < n) out[i] = buffer[lane()] + T(VARIANT);
}

template <typename K, int BLOCK>
KERNEL void bitonic_sort(K* keys) {
  static LDS K shared[BLOCK];
  shared[lane()] = keys[group() * BLOCK + lane()];
  barrier();
#pragma unroll
  for (int size = 2; size <= BLOCK; size *= 2) {
#pragma unroll
    for (int stride = size / 2; stride > 0; stride /= 2) {
      unsigned partner = lane() ^ (unsigned)stride;
      if (partner > lane()) {
        bool up = (lane() & (unsigned)size) == 0;
        K a = shared[lane()], b = shared[partner];
        if ((a > b) == up) { shared[lane()] = b; shared[partner] = a; }
      }
      barrier();
    }
  }
  keys[group() * BLOCK + lane()] = shared[lane()];
}

template <typename T, int WIDTH>
KERNEL void stencil_private(int n, const T* __restrict__ in, T* __restrict__ out, int shift) {
  T window[WIDTH];
  for (int i = 0; i < WIDTH; i++) window[i] = in[(group() * 64 + lane()) * WIDTH + i];
  for (int step = 0; step < n; step++) {
    T left = window[(step + shift) % WIDTH], right = window[(step + WIDTH - shift) % WIDTH];
    window[(lane() + step) % WIDTH] = fma_of(left, T(0.5), right) + T(VARIANT);
  }
  T s = 0;
  for (int i = 0; i < WIDTH; i++) s += window[i];
  out[group() * 64 + lane()] = s;
}

#define CSRMV(T, I, B, W) template KERNEL void csrmv_vector<T, I, B, W>(I, const I*, const I*, const T*, const T*, \
                                                                         T*, T, T);
#define CSRMV_ALL(T, I) CSRMV(T, I, 64, 4) CSRMV(T, I, 128, 8) CSRMV(T, I, 256, 16) CSRMV(T, I, 256, 32) \
                        CSRMV(T, I, 512, 64) CSRMV(T, I, 1024, 64)
CSRMV_ALL(float, int) CSRMV_ALL(double, int) CSRMV_ALL(float, long) CSRMV_ALL(double, long)
CSRMV_ALL(int, int) CSRMV_ALL(long, long)

#define GEMM(T, M, N, K) template KERNEL void gemm_tile<T, M, N, K>(int, int, int, const T*, const T*, T*);
#define GEMM_ALL(T) GEMM(T, 1, 1, 4) GEMM(T, 2, 2, 4) GEMM(T, 2, 4, 8) GEMM(T, 4, 4, 8) GEMM(T, 4, 8, 8) \
                    GEMM(T, 8, 8, 4) GEMM(T, 8, 8, 8) GEMM(T, 4, 2, 16)
GEMM_ALL(float) GEMM_ALL(double) GEMM_ALL(int)

#define SCAN(T, B) template KERNEL void block_scan<T, B>(int, const T*, T*);
#define SCAN_ALL(T) SCAN(T, 64) SCAN(T, 128) SCAN(T, 256) SCAN(T, 512) SCAN(T, 1024)
SCAN_ALL(float) SCAN_ALL(double) SCAN_ALL(int) SCAN_ALL(long)

#define SORT(K, B) template KERNEL void bitonic_sort<K, B>(K*);
#define SORT_ALL(K) SORT(K, 64) SORT(K, 128) SORT(K, 256) SORT(K, 512)
SORT_ALL(float) SORT_ALL(double) SORT_ALL(int) SORT_ALL(long)

#define STENCIL(T, W) template KERNEL void stencil_private<T, W>(int, const T*, T*, int);
#define STENCIL_ALL(T) STENCIL(T, 24) STENCIL(T, 48) STENCIL(T, 96 + VARIANT)
STENCIL_ALL(float) STENCIL_ALL(double) STENCIL_ALL(int)
