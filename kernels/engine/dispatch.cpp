// Shape -> kernel configuration.  The tables mirror the instantiations in
// kernels/*.hip; the heuristics are the usual ones: big tiles for prompt
// processing, small tiles when the grid would not fill the GPU.
#include "dispatch.h"

namespace {

const spw_gemm_choice kGemm[] = {
    {spw_launch_gemm_i8_128x128x64_2x2_128, 128, 128, "gemm_i8<128,128,64,2,2,128>"},
    {spw_launch_gemm_i8_128x128x32_2x2_128, 128, 128, "gemm_i8<128,128,32,2,2,128>"},
    {spw_launch_gemm_i8_128x128x32_2x2_1024, 128, 128, "gemm_i8<128,128,32,2,2,1024>"},
    {spw_launch_gemm_i8_128x96x32_2x1_64, 128, 96, "gemm_i8<128,96,32,2,1,64>"},
    {spw_launch_gemm_i8_128x64x32_2x2_128, 128, 64, "gemm_i8<128,64,32,2,2,128>"},
};

const spw_mmq_choice kMmq[] = {
    {spw_launch_mul_mat_q4_K_128x128, 128, 128, "mul_mat_q4_K<128,128,128>"},
    {spw_launch_mul_mat_q4_K_128x64, 128, 64, "mul_mat_q4_K<128,64,128>"},
    {spw_launch_mul_mat_q4_K_64x64, 64, 64, "mul_mat_q4_K<64,64,128>"},
};

// Blocks needed to keep a mid-size GPU busy (60 compute units x 2).
const long kFillBlocks = 120;

}  // namespace

spw_gemm_choice spw_choose_gemm(int m, int n, int k) {
  const spw_gemm_choice none = {0, 0, 0, "none"};
  for (const spw_gemm_choice &c : kGemm) {
    if (m % c.bm || n % c.bn) continue;
    const bool deep = c.launch == spw_launch_gemm_i8_128x128x64_2x2_128;
    if (k % (deep ? 64 : 32)) continue;
    if (deep && k < 4096) continue;  // the deep K block only pays off on long reductions
    if (c.launch == spw_launch_gemm_i8_128x128x32_2x2_1024) continue;  // kept for comparison only
    if ((long)(m / c.bm) * (n / c.bn) >= kFillBlocks || c.bn == 64) return c;
  }
  return none;
}

spw_mmq_choice spw_choose_mmq(int rows, int tokens, int k) {
  const spw_mmq_choice none = {0, 0, 0, "none"};
  if (k % 256) return none;
  for (const spw_mmq_choice &c : kMmq) {
    if (rows % c.bm || tokens % c.bn) continue;
    if ((long)(rows / c.bm) * (tokens / c.bn) >= kFillBlocks || c.bm == 64) return c;
  }
  return none;
}

spw_rmsnorm_choice spw_choose_rmsnorm(int hidden, int tokens) {
  switch (hidden) {
    case 4096: return {spw_launch_rmsnorm_4096_256_256, "rmsnorm<4096,256,256>"};
    case 8192: return {spw_launch_rmsnorm_8192_256_256, "rmsnorm<8192,256,256>"};
    case 16384:
      // Few rows: fewer, fatter threads per row leave room for more rows per CU.
      if (tokens < 64) return {spw_launch_rmsnorm_16384_128_128, "rmsnorm<16384,128,128>"};
      return {spw_launch_rmsnorm_16384_256_256, "rmsnorm<16384,256,256>"};
    default: return {0, "none"};
  }
}

spw_topk_fn spw_choose_topk(int k) {
  if (k <= 8) return spw_launch_topk_sample_8_256;
  if (k <= 32) return spw_launch_topk_sample_32_256;
  return 0;
}
