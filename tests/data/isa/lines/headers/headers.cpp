// Fixture for the line tables' file and directory indexes (build.sh).
#include "include/ops.h"

extern "C" __attribute__((global)) void scale(float* out, const float* in, int n, float s) {
  for (int i = 0; i < n; i++)
    out[i] = scaled(in, i, s) + scaled(in, n - 1 - i, s);
}
