// Kernels that kill mutants no other fixture notices (issue 14):
// LDS sizes that are not a multiple of any allocation granule (43,688 B is a
// real gfx1100 kernel's size: clang gives 2 waves with a 1024-lane work-group,
// rounding it up to 512-byte blocks gives 1), and a private array with no
// spill (scratch that is not a spill).  Built by tests/unit/resources/
// test_mutants_occupancy.py with clang++-22 -x hip -O3 --cuda-device-only
// --offload-arch=gfx1100 -Rpass-analysis=kernel-resource-usage.
#include "mini_hip.h"

#define LDS_KERNEL(NAME, BYTES, LANES)                                                   \
  extern "C" __global__ void __launch_bounds__(LANES) NAME(unsigned char* out, int n) { \
    __shared__ unsigned char buffer[BYTES];                                              \
    for (int i = threadIdx.x; i < BYTES; i += LANES) buffer[i] = (unsigned char)(i * n); \
    __syncthreads();                                                                     \
    out[blockIdx.x * LANES + threadIdx.x] = buffer[(threadIdx.x * 7 + n) % BYTES];       \
  }

LDS_KERNEL(lds_43688_1024, 43688, 1024)
LDS_KERNEL(lds_43688_256, 43688, 256)
LDS_KERNEL(lds_21845_1024, 21845, 1024)
LDS_KERNEL(lds_32769_512, 32769, 512)
LDS_KERNEL(lds_16385_1024, 16385, 1024)
LDS_KERNEL(lds_3_64, 3, 64)

extern "C" __global__ void __launch_bounds__(128) private_no_spill(float* out, const int* index, int n) {
  float table[48];
  for (int i = 0; i < 48; ++i) table[i] = out[i * n + threadIdx.x];
  out[threadIdx.x] = table[index[threadIdx.x] % 48];
}
