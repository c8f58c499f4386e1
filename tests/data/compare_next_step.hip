// Kernels whose occupancy on gfx1100 (wave32, WGP mode, 256 threads) is held by
// their VGPRs or by VGPRs and LDS at once, for `spillway compare`'s next step
// (tests/unit/gate/test_compare_next_step.py).  Each figure is a macro, so one
// source builds the old build, the new build and the builds at the next step:
//   STEP_TOP  highest VGPR vgpr_step clobbers (vgpr_count = its number + 1)
//   TWO_TOP   the same for two_limits, whose static LDS is TWO_LDS bytes
// Built at test time by bookworm's clang-22, device only, with
// -Rpass-analysis=kernel-resource-usage as the oracle (support.toolchains.Builder.remarks):
//   clang++-22 -x hip --offload-arch=gfx1100 -nogpuinc -nogpulib -Ikernels/include -O3
//     --cuda-device-only --no-gpu-bundle-output -c compare_next_step.hip -o k.co
//     -Rpass-analysis=kernel-resource-usage -DSTEP_TOP=v120 -DTWO_TOP=v120 -DTWO_LDS=24000
#include "mini_hip.h"

#define SPW_STR2(x) #x
#define SPW_STR(x) SPW_STR2(x)
#ifndef STEP_TOP
#define STEP_TOP v95
#endif
#ifndef TWO_TOP
#define TWO_TOP v95
#endif
#ifndef TWO_LDS
#define TWO_LDS 16384
#endif

extern "C" __global__ void __launch_bounds__(256) vgpr_step(float *p) {
  asm volatile("" ::: SPW_STR(STEP_TOP));
  p[threadIdx.x] = 1.0f;
}

extern "C" __global__ void __launch_bounds__(256) two_limits(float *p) {
  __shared__ char s[TWO_LDS];
  s[threadIdx.x % TWO_LDS] = (char)p[threadIdx.x];
  __syncthreads();
  asm volatile("" ::: SPW_STR(TWO_TOP));
  p[threadIdx.x] = s[(threadIdx.x + 1) % TWO_LDS];
}

// At the hardware cap in every build: no next step.
extern "C" __global__ void __launch_bounds__(256) steady(float *p) {
  asm volatile("" ::: "v31");
  p[threadIdx.x] = 2.0f;
}
