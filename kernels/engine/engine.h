// libengine: a small LLM inference engine's device layer.  The public C API
// that an application (or a test) calls; see engine.cpp for the layer plan and
// dispatch.cpp for how a kernel configuration is chosen per shape.
#pragma once

#include <stddef.h>

typedef struct ihipStream_t *hipStream_t;

#ifdef __cplusplus
extern "C" {
#endif

enum spw_quant { SPW_QUANT_INT8 = 0, SPW_QUANT_Q4_K = 1 };

typedef struct spw_model_config {
  int hidden;       // 4096, 8192 or 16384
  int ffn;          // feed-forward width (multiple of 128)
  int vocab;        // vocabulary size
  int layers;
  int experts;      // 0 for a dense model, else routed experts per layer (<= 128)
  int quant;        // enum spw_quant
  int top_k;        // 8 or 32 sampling candidates
  float rms_eps;
} spw_model_config;

typedef struct spw_layer_weights {
  const void *attn_norm, *ffn_norm;      // fp16 [hidden]
  const void *qkv, *out, *up, *down;     // int8 [rows][k] or Q4_K blocks
  const void *expert_chunks;             // routed experts: uint4 [ffn][4]
  const float *expert_scales;            // [ffn][4]
} spw_layer_weights;

typedef struct spw_buffers {
  void *hidden, *residual, *normed;      // fp16 [tokens][hidden]
  void *activations;                     // int8 or Q8_1 [tokens][...]
  int *accum;                            // int32 [tokens][max(ffn, 3*hidden)]
  float *logits;                         // [tokens][vocab]
  float *scratch;                        // [tokens][ffn]
  int *route;                            // [tokens]
  unsigned *counts, *offsets, *totals;   // [experts]
  const float *uniform;                  // [tokens] random numbers for sampling
  int *token;                            // [tokens] sampled ids
  float *prob;                           // [tokens]
} spw_buffers;

typedef struct spw_engine spw_engine;

// Validates the configuration; returns NULL and sets *error on a bad one.
spw_engine *spw_engine_create(const spw_model_config *config, const char **error);
void spw_engine_destroy(spw_engine *engine);

// One forward step over `tokens` tokens (a multiple of 128 for prompt
// processing, or 1..127 for decoding), then sampling.  Returns 0 or the
// first non-zero hipError_t.
int spw_engine_forward(spw_engine *engine, const spw_layer_weights *layers, spw_buffers *buffers, int tokens,
                       float temperature, hipStream_t stream);

// Human-readable description of the kernel plan, for logs.
size_t spw_engine_describe(const spw_engine *engine, int tokens, char *text, size_t size);

const char *spw_engine_version(void);

#ifdef __cplusplus
}
#endif
