// Top-k sampling over the vocabulary, one block per sequence.
//
// Each thread scans a strided slice of the logits and keeps its own sorted
// top-K list, inserting with a runtime index (the private list is what makes
// toolchains differ: LLVM 15/16/19 keep the K=32 lists in scratch memory,
// LLVM 22 promotes them to registers at a lower occupancy).  The block then
// merges the per-thread lists K times by a block-wide arg-max, takes a
// temperature softmax over the K survivors and samples one token.
#include "spw_device.h"

template <int K, int NT>
__global__ void SPW_LAUNCH_BOUNDS(NT)
topk_sample(const float* __restrict__ logits, int vocab, float inv_temperature,
            const float* __restrict__ uniform, int* __restrict__ token, float* __restrict__ prob) {
  __shared__ float wave_best[NT / 32];
  __shared__ int wave_owner[NT / 32];
  __shared__ float cand_val[K];
  __shared__ int cand_idx[K];
  const int tid = threadIdx.x;
  const long row = blockIdx.x;
  const float* in = logits + row * vocab;

  float val[K];
  int idx[K];
#pragma unroll
  for (int i = 0; i < K; ++i) {
    val[i] = -__builtin_inff();
    idx[i] = -1;
  }
  for (int i = tid; i < vocab; i += NT) {
    const float x = in[i];
    if (x > val[K - 1]) {
      int p = K - 1;
      while (p > 0 && val[p - 1] < x) {  // runtime-indexed shift: a private array
        val[p] = val[p - 1];
        idx[p] = idx[p - 1];
        --p;
      }
      val[p] = x;
      idx[p] = i;
    }
  }

  // Merge: K rounds of block-wide arg-max over the heads of the lists.
  int head = 0;
  const int waves = NT / SPW_WAVE;
  for (int round = 0; round < K; ++round) {
    const float mine = head < K ? val[head] : -__builtin_inff();
    const float best = spw_wave_max(mine);
    // lowest lane holding the wave's best proposes itself
    const unsigned long long ballot = spw_ballot(mine == best);
    const int winner_lane = (int)__builtin_ctzll(ballot);
    if (spw_lane() == 0) {
      wave_best[tid / SPW_WAVE] = best;
      wave_owner[tid / SPW_WAVE] = (tid / SPW_WAVE) * SPW_WAVE + winner_lane;
    }
    __syncthreads();
    float top = wave_best[0];
    int owner = wave_owner[0];
    for (int w = 1; w < waves; ++w)
      if (wave_best[w] > top) {
        top = wave_best[w];
        owner = wave_owner[w];
      }
    if (tid == owner) {
      cand_val[round] = top;
      cand_idx[round] = head < K ? idx[head] : -1;
      ++head;
    }
    __syncthreads();
  }

  if (tid == 0) {
    const float m = cand_val[0];
    float weights[K];
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      weights[i] = spw_exp((cand_val[i] - m) * inv_temperature);
      sum += weights[i];
    }
    const float u = uniform[row] * sum;
    float acc = 0.0f;
    int pick = K - 1;
    for (int i = 0; i < K; ++i) {
      acc += weights[i];
      if (u < acc) {
        pick = i;
        break;
      }
    }
    token[row] = cand_idx[pick];
    prob[row] = weights[pick] / sum;
  }
}

// Greedy/penalty pre-pass: a 256-bin private byte histogram of recent tokens,
// flushed with atomics (scratch memory without any spilling).
__global__ void SPW_LAUNCH_BOUNDS(256)
token_histogram(const unsigned char* __restrict__ recent, int n, unsigned* __restrict__ bins) {
  unsigned local[256];
#pragma unroll 4
  for (int i = 0; i < 256; ++i) local[i] = 0;
  for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += 256 * 64) local[recent[i]]++;
  for (int i = 0; i < 256; ++i)
    if (local[i]) spw_atomic_add_device(&bins[i], local[i]);
}

#define SPW_TOPK(K, NT)                                                                                \
  template __global__ void topk_sample<K, NT>(const float*, int, float, const float*, int*, float*);  \
  extern "C" hipError_t spw_launch_topk_sample_##K##_##NT(const float* logits, int rows, int vocab,   \
                                                          float temperature, const float* uniform,    \
                                                          int* token, float* prob, hipStream_t s) {   \
    topk_sample<K, NT><<<dim3(rows), dim3(NT), 0, s>>>(logits, vocab, 1.0f / temperature, uniform,    \
                                                       token, prob);                                   \
    return hipSuccess;                                                                                          \
  }

SPW_TOPK(8, 256)
SPW_TOPK(32, 256)

extern "C" hipError_t spw_launch_token_histogram(const unsigned char* recent, int n, unsigned* bins,
                                                 hipStream_t s) {
  token_histogram<<<dim3(64), dim3(256), 0, s>>>(recent, n, bins);
  return hipSuccess;
}
