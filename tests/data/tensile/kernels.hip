// A Tensile-like multi-note code object (issue 9): Tensile assembles one
// object per kernel and links them with `ld.lld -shared` into one code
// object, which then holds one NT_AMDGPU_METADATA note per kernel.
// build.sh compiles this file once per KERNEL (device only, to assembly,
// then assembled to a relocatable object) and links the objects the same
// way.  The kernels differ in every resource the report shows.
#include "mini_hip.h"

#if KERNEL == 0
// few registers, no LDS, no scratch
extern "C" __global__ void __launch_bounds__(256) tensile_axpy(float* y, const float* x, float a) {
  unsigned i = blockIdx.x * 256 + threadIdx.x;
  y[i] = a * x[i] + y[i];
}
#elif KERNEL == 1
// static LDS (8 KiB) and a 1024-thread bound
extern "C" __global__ void __launch_bounds__(1024) tensile_lds_tile(float* out, const float* in) {
  __shared__ float tile[2048];
  unsigned t = threadIdx.x;
  tile[t] = in[blockIdx.x * 2048 + t];
  tile[t + 1024] = in[blockIdx.x * 2048 + t + 1024];
  __syncthreads();
  out[blockIdx.x * 1024 + t] = tile[2047 - t] + tile[t ^ 1];
}
#elif KERNEL == 2
// a dynamically indexed private array: scratch without spills
extern "C" __global__ void __launch_bounds__(128) tensile_private(float* out, const int* index, int n) {
  float table[64];
  for (int i = 0; i < 64; ++i) table[i] = out[i * n + threadIdx.x];
  out[threadIdx.x] = table[index[threadIdx.x] & 63];
}
#elif KERNEL == 3
// many live values under a 1024-thread bound: a high VGPR count, spills
extern "C" __global__ void __launch_bounds__(1024) tensile_pressure(float* out, const float* in, int n) {
  float acc[96];
#pragma unroll
  for (int i = 0; i < 96; ++i) acc[i] = in[i * n + threadIdx.x];
  for (int k = 0; k < n; ++k) {
#pragma unroll
    for (int i = 0; i < 96; ++i) acc[i] = acc[i] * acc[(i + k) % 96 == i ? i : (i + 1) % 96] + in[k];
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < 96; ++i) s += acc[i] * (float)i;
  out[threadIdx.x] = s;
}
#elif KERNEL == 4
// a C++ (mangled) name and a 64-thread bound
namespace tensile {
template <int N> __global__ void __launch_bounds__(64) scale(float* data, float factor) {
  data[blockIdx.x * N + threadIdx.x] *= factor;
}
template __global__ void scale<64>(float*, float);
}  // namespace tensile
#endif
