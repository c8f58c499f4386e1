// Kernel selection: which compiled configuration serves a given shape.
#pragma once

#include "launch.h"

typedef hipError_t (*spw_gemm_fn)(const signed char *, const signed char *, int *, int, int, int, hipStream_t);
typedef hipError_t (*spw_mmq_fn)(const void *, const void *, float *, int, int, int, hipStream_t);
typedef hipError_t (*spw_rmsnorm_fn)(const void *, void *, const void *, void *, int, float, hipStream_t);
typedef hipError_t (*spw_topk_fn)(const float *, int, int, float, const float *, int *, float *, hipStream_t);

struct spw_gemm_choice {
  spw_gemm_fn launch;
  int bm, bn;
  const char *name;
};
struct spw_mmq_choice {
  spw_mmq_fn launch;
  int bm, bn;
  const char *name;
};
struct spw_rmsnorm_choice {
  spw_rmsnorm_fn launch;
  const char *name;
};

// NULL launch when no configuration fits the shape.
spw_gemm_choice spw_choose_gemm(int m, int n, int k);
spw_mmq_choice spw_choose_mmq(int rows, int tokens, int k);
spw_rmsnorm_choice spw_choose_rmsnorm(int hidden, int tokens);
spw_topk_fn spw_choose_topk(int k);
