// A second translation unit, so linked libraries hold several bundles.
#include "mini_hip.h"

extern "C" __global__ void __launch_bounds__(64) axpy(float* y, const float* x, float a, int n) {
  unsigned i = blockIdx.x * 64 + threadIdx.x;
  if (i < (unsigned)n) y[i] += a * x[i];
}
