// Blocked int8 GEMM, C[M,N] (int32) = A[M,K] . B[N,K]^T, the shape of an
// int8-quantised linear layer (activations x weights).
//
// gfx11 (RDNA3/3.5): wave32 WMMA (v_wmma_i32_16x16x16_iu8); every wave owns a
// (BM/WAVES_M) x (BN/WAVES_N) block made of 16x16 tiles, 8 accumulator VGPRs
// per tile, fed from double-buffered LDS slabs of BM x BK and BN x BK bytes.
// The 128x128 tiles with 4 waves need ~190-250 VGPRs: LLVM 15 caps gfx11 at
// 128 VGPRs and spills them, LLVM 16/19/22 fit them with different
// occupancy; the 2-wave 128x96 tile is borderline on LLVM 16.
//
// gfx90a / gfx942 (CDNA2/3, wave64): the same block tiling on MFMA
// (v_mfma_i32_16x16x16i8 / v_mfma_i32_16x16x32_i8), whose accumulators live
// in the unified VGPR/AGPR register file of the data-centre parts.  Any other
// target gets an untuned scalar loop so that the file still compiles.
#include "spw_device.h"

template <int BM, int BN, int BK, int WAVES_M, int WAVES_N, int MAXT>
__global__ void SPW_LAUNCH_BOUNDS(MAXT)
gemm_i8(const signed char* __restrict__ A, const signed char* __restrict__ B, int* __restrict__ C,
        int M, int N, int K) {
  constexpr int NT = WAVES_M * WAVES_N * 32;  // threads per block (the gfx11 wave32 layout)
  static_assert(BM % (16 * WAVES_M) == 0 && BN % (16 * WAVES_N) == 0 && BK % 16 == 0, "tile shape");
  __shared__ __attribute__((aligned(16))) signed char sa[2][BM * BK];
  __shared__ __attribute__((aligned(16))) signed char sb[2][BN * BK];

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;

  auto stage = [&](int buf, int k0) {
    // 16-byte copies global -> LDS, spread over the block.
    for (int i = tid; i < BM * BK / 16; i += NT) {
      const int row = i / (BK / 16), col = (i % (BK / 16)) * 16;
      *(spw_v4i*)&sa[buf][row * BK + col] = *(const spw_v4i*)&A[(long)(m0 + row) * K + k0 + col];
    }
    for (int i = tid; i < BN * BK / 16; i += NT) {
      const int row = i / (BK / 16), col = (i % (BK / 16)) * 16;
      *(spw_v4i*)&sb[buf][row * BK + col] = *(const spw_v4i*)&B[(long)(n0 + row) * K + k0 + col];
    }
  };

#if SPW_HAS_WMMA_GFX11
  constexpr int TM = BM / WAVES_M / 16;  // 16x16 tiles per wave along M
  constexpr int TN = BN / WAVES_N / 16;  // ... and along N
  const int lane = tid % 32;
  const int wave = tid / 32;
  const int wm = wave / WAVES_N, wn = wave % WAVES_N;
  spw_v8i acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = spw_v8i{0, 0, 0, 0, 0, 0, 0, 0};

  stage(0, 0);
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    if (k0 + BK < K) stage(buf ^ 1, k0 + BK);
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      spw_v4i a[TM], b[TN];
      // wave32 iu8 operands: lane%16 selects the row, both half-waves carry it.
#pragma unroll
      for (int i = 0; i < TM; ++i)
        a[i] = *(const spw_v4i*)&sa[buf][(wm * TM * 16 + i * 16 + lane % 16) * BK + kk];
#pragma unroll
      for (int j = 0; j < TN; ++j)
        b[j] = *(const spw_v4i*)&sb[buf][(wn * TN * 16 + j * 16 + lane % 16) * BK + kk];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, a[i], true, b[j], acc[i][j], false);
    }
    __syncthreads();
    buf ^= 1;
  }
  // Accumulator layout: element r of lane l is row 2*r + l/16, column l%16.
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int r = 0; r < 8; ++r) {
        const int row = m0 + wm * TM * 16 + i * 16 + 2 * r + lane / 16;
        const int col = n0 + wn * TN * 16 + j * 16 + lane % 16;
        C[(long)row * N + col] = acc[i][j][r];
      }
#elif defined(__gfx90a__) || defined(__gfx942__)
  // CDNA2/CDNA3: wave64 MFMA.  The block's waves split the tile along M; each
  // lane keeps 4 int32 accumulators per 16x16 tile (in AGPRs on gfx90a).
#if defined(__gfx942__)
  constexpr int MK = 32;  // v_mfma_i32_16x16x32_i8: 8 bytes of A and of B per lane
  typedef long operand_t;
#else
  constexpr int MK = 16;  // v_mfma_i32_16x16x16i8: 4 bytes per lane
  typedef int operand_t;
#endif
  constexpr int WAVES = NT / 64;
  constexpr int TM = BM / WAVES / 16, TN = BN / 16;
  const int lane = tid % 64;
  const int wave = tid / 64;
  spw_v4i acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = spw_v4i{0, 0, 0, 0};

  stage(0, 0);
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    if (k0 + BK < K) stage(buf ^ 1, k0 + BK);
#pragma unroll
    for (int kk = 0; kk < BK; kk += MK) {
      const int kl = kk + (lane / 16) * (MK / 4);
      operand_t a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        a[i] = *(const operand_t*)&sa[buf][(wave * TM * 16 + i * 16 + lane % 16) * BK + kl];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = *(const operand_t*)&sb[buf][(j * 16 + lane % 16) * BK + kl];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
#if defined(__gfx942__)
          acc[i][j] = __builtin_amdgcn_mfma_i32_16x16x32_i8(a[i], b[j], acc[i][j], 0, 0, 0);
#else
          acc[i][j] = __builtin_amdgcn_mfma_i32_16x16x16i8(a[i], b[j], acc[i][j], 0, 0, 0);
#endif
    }
    __syncthreads();
    buf ^= 1;
  }
  // Accumulator layout: element r of lane l is row 4*(l/16) + r, column l%16.
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = m0 + wave * TM * 16 + i * 16 + 4 * (lane / 16) + r;
        C[(long)row * N + n0 + j * 16 + lane % 16] = acc[i][j][r];
      }
#else
  // Any other target: a plain dot product per output element (not tuned).
  stage(0, 0);
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    if (k0 + BK < K) stage(buf ^ 1, k0 + BK);
#pragma unroll 1
    for (int e = tid; e < BM * BN; e += NT) {
      const int row = e / BN, col = e % BN;
      int sum = 0;
#pragma unroll 1
      for (int kk = 0; kk < BK; ++kk) sum += sa[buf][row * BK + kk] * sb[buf][col * BK + kk];
      C[(long)(m0 + row) * N + n0 + col] += sum;
    }
    __syncthreads();
    buf ^= 1;
  }
#endif
}

// The tile configurations an engine would pick between (kernel names keep the
// template arguments, so each is its own baseline entry).
#define SPW_GEMM(BM, BN, BK, WM, WN, MAXT)                                                            \
  template __global__ void gemm_i8<BM, BN, BK, WM, WN, MAXT>(const signed char*, const signed char*, \
                                                             int*, int, int, int);                   \
  extern "C" hipError_t spw_launch_gemm_i8_##BM##x##BN##x##BK##_##WM##x##WN##_##MAXT(                  \
      const signed char* a, const signed char* b, int* c, int m, int n, int k, hipStream_t stream) {  \
    gemm_i8<BM, BN, BK, WM, WN, MAXT><<<dim3(n / BN, m / BM), dim3(WM * WN * 32), 0, stream>>>(      \
        a, b, c, m, n, k);                                                                            \
    return hipSuccess;                                                                                         \
  }

SPW_GEMM(128, 64, 32, 2, 2, 128)    // the small tile: fits every toolchain
SPW_GEMM(128, 128, 32, 2, 2, 128)   // register-hungry: LLVM 15 spills on gfx11
SPW_GEMM(128, 128, 64, 2, 2, 128)   // deeper K block: twice the LDS, more operand registers
SPW_GEMM(128, 128, 32, 2, 2, 1024)  // launch bound left at the 1024 default: fewer VGPRs allowed
SPW_GEMM(128, 96, 32, 2, 1, 64)     // 2 waves of 96 accumulator tiles: borderline on LLVM 16
