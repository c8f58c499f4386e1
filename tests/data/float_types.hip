// Kernels whose manglings use builtin types newer than GCC 12's demangler:
// _Float16 (DF16_) and __bf16 / std::bfloat16_t (DF16b), alone, together,
// repeated through template parameters (T_) and next to __fp16 (Dh), which
// must stay "half". Read by tests/test_names.py.
#include "mini_hip.h"

template <typename T>
__global__ void scale(T* out, const T* in, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}

template <typename A, typename B>
__global__ void convert(B* out, const A* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (B)(float)in[i];
}

__global__ void fp16_with_half(_Float16* out, const __fp16* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (_Float16)(float)in[i];
}

template __global__ void scale<_Float16>(_Float16*, const _Float16*, _Float16, int);
template __global__ void scale<__bf16>(__bf16*, const __bf16*, __bf16, int);
template __global__ void convert<_Float16, __bf16>(__bf16*, const _Float16*, int);
template __global__ void convert<__bf16, float>(float*, const __bf16*, int);
template __global__ void convert<__fp16, _Float16>(_Float16*, const __fp16*, int);
