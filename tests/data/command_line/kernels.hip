// Fixture for the recorded command line (.GCC.command.line, clang -frecord-command-line):
// built by build.sh in this folder.  One kernel with a runtime-indexed private array
// (scratch), so a baseline written from it records a kernel.
#include "mini_hip.h"

__global__ void pick(const int *index, float *out) {
  float list[64];
  for (int i = 0; i < 64; ++i) list[i] = out[i] * 2.0f;
  out[threadIdx.x] = list[index[threadIdx.x] & 63];
}
