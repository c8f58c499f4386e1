// Fused residual-add + RMS norm, fp16 in and out, as every decoder layer runs
// it twice per token.  One block per row; each thread keeps HIDDEN/NT values
// of the row in fp32 registers between the reduction and the scaling, so the
// register need grows with the hidden width: 16..256 values per thread.
// Wide rows with few threads (or a launch bound left at the 1024 default,
// which caps the registers a thread may use) are where toolchains differ.
#include "spw_device.h"

template <int HIDDEN, int NT, int MAXT>
__global__ void SPW_LAUNCH_BOUNDS(MAXT)
rmsnorm(const spw_half* __restrict__ x, spw_half* __restrict__ residual, const spw_half* __restrict__ weight,
        spw_half* __restrict__ out, float eps) {
  static_assert(HIDDEN % (2 * NT) == 0, "a whole number of value pairs per thread");
  constexpr int PER = HIDDEN / NT;
  __shared__ float partial[NT / 32 > 0 ? NT / 32 : 1];
  const int tid = threadIdx.x;
  const long base = (long)blockIdx.x * HIDDEN;

  // Two halves per access (neighbouring threads read neighbouring pairs).
  typedef spw_half half2 __attribute__((ext_vector_type(2)));
  const half2* x2 = (const half2*)(x + base);
  half2* r2 = (half2*)(residual + base);
  const half2* w2 = (const half2*)weight;
  half2* o2 = (half2*)(out + base);

  float v[PER];
  float sumsq = 0.0f;
#pragma unroll
  for (int i = 0; i < PER / 2; ++i) {
    const half2 a = x2[i * NT + tid], b = r2[i * NT + tid];
    v[2 * i] = (float)a.x + (float)b.x;
    v[2 * i + 1] = (float)a.y + (float)b.y;
    sumsq += v[2 * i] * v[2 * i] + v[2 * i + 1] * v[2 * i + 1];
  }
  // The residual stream carries the pre-norm sum to the next layer.
#pragma unroll
  for (int i = 0; i < PER / 2; ++i) r2[i * NT + tid] = half2{(spw_half)v[2 * i], (spw_half)v[2 * i + 1]};

  const float total = spw_block_sum<NT>(sumsq, partial);
  const float scale = spw_rsqrt(total / HIDDEN + eps);
#pragma unroll
  for (int i = 0; i < PER / 2; ++i) {
    const half2 w = w2[i * NT + tid];
    o2[i * NT + tid] = half2{(spw_half)(v[2 * i] * scale * (float)w.x), (spw_half)(v[2 * i + 1] * scale * (float)w.y)};
  }
}

#define SPW_RMSNORM(HIDDEN, NT, MAXT)                                                                     \
  template __global__ void rmsnorm<HIDDEN, NT, MAXT>(const spw_half*, spw_half*, const spw_half*,         \
                                                     spw_half*, float);                                   \
  extern "C" hipError_t spw_launch_rmsnorm_##HIDDEN##_##NT##_##MAXT(const void* x, void* residual,         \
                                                                    const void* weight, void* out,         \
                                                                    int rows, float eps,                   \
                                                                    hipStream_t stream) {                  \
    rmsnorm<HIDDEN, NT, MAXT><<<dim3(rows), dim3(NT), 0, stream>>>(                                      \
        (const spw_half*)x, (spw_half*)residual, (const spw_half*)weight, (spw_half*)out, eps);           \
    return hipSuccess;                                                                                             \
  }

SPW_RMSNORM(4096, 256, 256)     // 16 values per thread: small everywhere
SPW_RMSNORM(8192, 256, 256)     // 32 per thread
SPW_RMSNORM(16384, 256, 256)    // 64 per thread: LLVM 15 spills on gfx11
SPW_RMSNORM(16384, 128, 128)    // 128 per thread: occupancy differs by toolchain
SPW_RMSNORM(16384, 128, 1024)   // same, launch bound at the default: fewer registers allowed
