// Two small kernels compiled device-only to raw code objects, then embedded
// as data in host.c (see build.sh).  One needs scratch (a private array).
#include "mini_hip.h"

extern "C" __global__ void __launch_bounds__(64) embedded_scale(float* data, float factor) {
  data[blockIdx.x * 64 + threadIdx.x] *= factor;
}

extern "C" __global__ void __launch_bounds__(128) embedded_private(float* out, const int* index, int n) {
  float table[40];
  for (int i = 0; i < 40; ++i) table[i] = out[i * n + threadIdx.x];
  out[threadIdx.x] = table[index[threadIdx.x] % 40];
}
