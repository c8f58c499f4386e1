// The launch wrappers that the kernel translation units (kernels/*.hip)
// export: plain C functions, so the host engine needs no HIP headers and no
// HIP runtime at link time (the kernel objects reference hipLaunchKernel and
// friends; whoever loads libengine.so provides them).
#pragma once

typedef struct ihipStream_t *hipStream_t;
typedef int hipError_t;

#ifdef __cplusplus
extern "C" {
#endif

#define SPW_DECLARE_GEMM(BM, BN, BK, WM, WN, MAXT)                                                        \
  hipError_t spw_launch_gemm_i8_##BM##x##BN##x##BK##_##WM##x##WN##_##MAXT(                                  \
      const signed char *a, const signed char *b, int *c, int m, int n, int k, hipStream_t stream);
SPW_DECLARE_GEMM(128, 64, 32, 2, 2, 128)
SPW_DECLARE_GEMM(128, 128, 32, 2, 2, 128)
SPW_DECLARE_GEMM(128, 128, 64, 2, 2, 128)
SPW_DECLARE_GEMM(128, 128, 32, 2, 2, 1024)
SPW_DECLARE_GEMM(128, 96, 32, 2, 1, 64)
#undef SPW_DECLARE_GEMM

#define SPW_DECLARE_MMQ(BM, BN)                                                                             \
  hipError_t spw_launch_mul_mat_q4_K_##BM##x##BN(const void *w, const void *x, float *out, int rows,          \
                                                 int tokens, int k, hipStream_t s);
SPW_DECLARE_MMQ(64, 64)
SPW_DECLARE_MMQ(128, 64)
SPW_DECLARE_MMQ(128, 128)
#undef SPW_DECLARE_MMQ

#define SPW_DECLARE_RMSNORM(HIDDEN, NT, MAXT)                                                                \
  hipError_t spw_launch_rmsnorm_##HIDDEN##_##NT##_##MAXT(const void *x, void *residual, const void *weight,  \
                                                         void *out, int rows, float eps, hipStream_t stream);
SPW_DECLARE_RMSNORM(4096, 256, 256)
SPW_DECLARE_RMSNORM(8192, 256, 256)
SPW_DECLARE_RMSNORM(16384, 256, 256)
SPW_DECLARE_RMSNORM(16384, 128, 128)
SPW_DECLARE_RMSNORM(16384, 128, 1024)
#undef SPW_DECLARE_RMSNORM

hipError_t spw_launch_topk_sample_8_256(const float *logits, int rows, int vocab, float temperature,
                                        const float *uniform, int *token, float *prob, hipStream_t s);
hipError_t spw_launch_topk_sample_32_256(const float *logits, int rows, int vocab, float temperature,
                                         const float *uniform, int *token, float *prob, hipStream_t s);
hipError_t spw_launch_token_histogram(const unsigned char *recent, int n, unsigned *bins, hipStream_t s);

hipError_t spw_launch_routed_gemv_q4(int mode, const void *chunks, const float *scales, const float *x,
                                     const int *route, float *out, int tokens, int cols, hipStream_t s);

hipError_t spw_launch_expert_offsets(const int *expert_of_token, unsigned tokens, unsigned *counts,
                                     unsigned *offsets, unsigned *block_totals, hipStream_t s);
hipError_t spw_launch_running_max(const float *in, float *out, float *block_totals, unsigned blocks,
                                  hipStream_t s);

#ifdef __cplusplus
}
#endif
