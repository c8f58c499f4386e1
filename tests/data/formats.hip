// Kernels for the container-format tests: a versioned inline namespace
// (as rocPRIM does), a private array (scratch without spills), LDS, and a
// launch bound.  Built with tests/support/toolchains.py (see test_formats.py
// for every command line).
#include "mini_hip.h"

// The inline namespace's name is a macro so the tests can build the same
// kernels as if from another rocPRIM release, or with the fixed name that
// spillway's stable key uses.
#ifndef ROCPRIM_NS_NAME
#define ROCPRIM_NS_NAME ROCPRIM_300400_NS
#endif
namespace rocprim {
inline namespace ROCPRIM_NS_NAME {
template <class T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <class Op, class T>
__global__ void __launch_bounds__(256) reduce_kernel(T* out, const T* in, Op op) {
  __shared__ T partial[256];
  partial[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < (unsigned)s) partial[threadIdx.x] = op(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
template __global__ void reduce_kernel<plus<int>, int>(int*, const int*, plus<int>);
}  // inline namespace
}  // namespace rocprim

extern "C" __global__ void __launch_bounds__(128) private_table(float* out, const int* index, int n) {
  float table[48];
  for (int i = 0; i < 48; ++i) table[i] = out[i * n + threadIdx.x];
  out[threadIdx.x] = table[index[threadIdx.x] % 48];
}

template <int N>
__global__ void scale(float* data, float factor) {
  data[blockIdx.x * N + threadIdx.x] *= factor;
}
template __global__ void scale<64>(float*, float);
