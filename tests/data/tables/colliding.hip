// Kernels whose names collide when cut (issue 25: tables where no figure is
// cut and no two kernels look alike): one long template, instantiated with
// arguments that differ only deep inside the name, each using scratch (a
// private array indexed at run time) so `spillway report` lists them by
// default.  tests/unit/report/test_table_widths.py compiles it twice into one
// shared library (two bundles holding the same kernels: identical records, one
// row with a count) for long target IDs (gfx90a:sramecc+:xnack-), and again
// with -DSTEP=2 for a build whose figures differ (compare, check).
#include "mini_hip.h"

#ifndef STEP
#define STEP 1
#endif

namespace a_rather_long_library_namespace { namespace detail {

template <typename T> struct config_with_a_long_name {};

template <int Block, int Items, typename Config, typename Value, bool Descending>
__global__ void __launch_bounds__(Block) segmented_radix_sort_kernel(Value* out, const Value* in, int n, int pick) {
  constexpr int N = Items * 16 * STEP;
  Value keep[N];
  unsigned i = blockIdx.x * Block + threadIdx.x;
  for (int k = 0; k < N; ++k) keep[(k * pick) % N] = in[(i + k) % n];   // stores at run-time indices
  out[i % n] = Descending ? keep[pick % N] : keep[(pick + 1) % N];
}

#define SORT(BLOCK, ITEMS, VALUE, DESC)                                                                   \
  template __global__ void segmented_radix_sort_kernel<BLOCK, ITEMS, config_with_a_long_name<VALUE>, VALUE, \
                                                       DESC>(VALUE*, const VALUE*, int, int);

SORT(256, 4, float, true)
SORT(256, 4, float, false)
SORT(256, 4, double, true)
SORT(256, 8, float, true)
SORT(128, 4, float, true)
SORT(128, 4, int, false)

}}  // namespace a_rather_long_library_namespace::detail
