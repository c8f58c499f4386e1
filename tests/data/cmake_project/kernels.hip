// Two kernels for the CMake example: a small one, and a row norm that keeps
// 128 floats per thread in registers (fits the register file with a launch
// bound of 128 threads; with 1024 it must spill on gfx90a).
#include "mini_hip.h"

#ifndef KERNEL_MAX_THREADS
#define KERNEL_MAX_THREADS 128
#endif

extern "C" __global__ void __launch_bounds__(256) scale_rows(float* data, float factor) {
  data[blockIdx.x * 256 + threadIdx.x] *= factor;
}

extern "C" __global__ void __launch_bounds__(KERNEL_MAX_THREADS) row_norm_16k(const float* in, float* out) {
  constexpr int per = 16384 / 128;
  const long base = (long)blockIdx.x * 16384;
  float v[per];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < per; ++i) {
    v[i] = in[base + i * 128 + threadIdx.x];
    sum += v[i] * v[i];
  }
  __shared__ float partial[KERNEL_MAX_THREADS / 32 + 1];
  sum += __shfl_xor_f(sum, 16);
  sum += __shfl_xor_f(sum, 8);
  sum += __shfl_xor_f(sum, 4);
  sum += __shfl_xor_f(sum, 2);
  sum += __shfl_xor_f(sum, 1);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < 4; ++w) total += partial[w];
  const float scale = __builtin_amdgcn_rsqf(total / 16384 + 1e-5f);
#pragma unroll
  for (int i = 0; i < per; ++i) out[base + i * 128 + threadIdx.x] = v[i] * scale;
}
