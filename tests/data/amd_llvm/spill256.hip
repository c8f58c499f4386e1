// A fixture for the AMD LLVM cells (tests/unit/matrix/test_amd_llvm.py): 256 floats
// live at once under a 1024-thread bound (128 VGPRs on gfx90a), so the code
// generator must spill, and AMD LLVM 22 / 23 and Debian's LLVM 22 spill differently.
#include "mini_hip.h"

__global__ __launch_bounds__(1024) void spill256(const float *in, float *out, int n) {
  float a[256];
#pragma unroll
  for (int i = 0; i < 256; ++i) a[i] = in[threadIdx.x + i * n];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
#pragma unroll
    for (int i = 0; i < 256; ++i) a[i] = a[i] * a[(i * 7 + r) & 255] + a[(i + 1) & 255];
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 256; ++i) s += a[i] * a[255 - i];
  out[threadIdx.x] = s;
}
