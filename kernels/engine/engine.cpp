// The engine's host side: validates a model configuration and runs the layer
// plan (norm -> QKV -> ... -> FFN or routed experts -> sampling) through the
// launch wrappers.  Host-only C++: no HIP headers, no C++ runtime features
// beyond what libc provides, so libengine.so links without the HIP runtime.
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

struct spw_engine {
  spw_model_config config;
};

extern "C" const char *spw_engine_version(void) { return "spillway-engine 1"; }

extern "C" spw_engine *spw_engine_create(const spw_model_config *config, const char **error) {
  const char *why = 0;
  if (!config) why = "no configuration";
  else if (!spw_choose_rmsnorm(config->hidden, 1).launch) why = "hidden must be 4096, 8192 or 16384";
  else if (config->ffn <= 0 || config->ffn % 128) why = "ffn must be a positive multiple of 128";
  else if (config->vocab <= 0) why = "vocab must be positive";
  else if (config->layers <= 0) why = "layers must be positive";
  else if (config->experts < 0 || config->experts > 128) why = "experts must be 0..128";
  else if (config->quant != SPW_QUANT_INT8 && config->quant != SPW_QUANT_Q4_K) why = "unknown quantisation";
  else if (!spw_choose_topk(config->top_k)) why = "top_k must be at most 32";
  if (why) {
    if (error) *error = why;
    return 0;
  }
  spw_engine *engine = (spw_engine *)calloc(1, sizeof(spw_engine));
  if (!engine) {
    if (error) *error = "out of memory";
    return 0;
  }
  engine->config = *config;
  return engine;
}

extern "C" void spw_engine_destroy(spw_engine *engine) { free(engine); }

namespace {

// out[tokens][rows] = activations[tokens][k] . weights[rows][k]^T
int linear(const spw_engine *e, const void *weights, const spw_buffers *b, int rows, int k, int tokens,
           hipStream_t s) {
  if (e->config.quant == SPW_QUANT_Q4_K) {
    const spw_mmq_choice c = spw_choose_mmq(rows, tokens < 64 ? 64 : tokens, k);
    return c.launch ? c.launch(weights, b->activations, b->scratch, rows, tokens, k, s) : -1;
  }
  const spw_gemm_choice c = spw_choose_gemm(tokens < 128 ? 128 : tokens, rows, k);
  return c.launch ? c.launch((const signed char *)b->activations, (const signed char *)weights, b->accum,
                             tokens, rows, k, s)
                  : -1;
}

}  // namespace

extern "C" int spw_engine_forward(spw_engine *e, const spw_layer_weights *layers, spw_buffers *b, int tokens,
                                  float temperature, hipStream_t s) {
  const spw_model_config &c = e->config;
  const spw_rmsnorm_choice norm = spw_choose_rmsnorm(c.hidden, tokens);
  int rc = 0;
  for (int l = 0; l < c.layers && !rc; ++l) {
    const spw_layer_weights &w = layers[l];
    rc = norm.launch(b->hidden, b->residual, w.attn_norm, b->normed, tokens, c.rms_eps, s);
    if (!rc) rc = linear(e, w.qkv, b, 3 * c.hidden, c.hidden, tokens, s);
    if (!rc) rc = linear(e, w.out, b, c.hidden, c.hidden, tokens, s);
    if (!rc) rc = norm.launch(b->hidden, b->residual, w.ffn_norm, b->normed, tokens, c.rms_eps, s);
    if (rc) break;
    if (c.experts > 0) {
      rc = spw_launch_expert_offsets(b->route, (unsigned)tokens, b->counts, b->offsets, b->totals, s);
      if (!rc) rc = spw_launch_routed_gemv_q4(tokens < 8 ? 1 : 0, w.expert_chunks, w.expert_scales, b->scratch,
                                               b->route, b->scratch, tokens, c.ffn, s);
    } else {
      rc = linear(e, w.up, b, c.ffn, c.hidden, tokens, s);
      if (!rc) rc = linear(e, w.down, b, c.hidden, c.ffn, tokens, s);
    }
  }
  if (!rc) rc = spw_choose_topk(c.top_k)(b->logits, tokens, c.vocab, temperature, b->uniform, b->token, b->prob, s);
  return rc;
}

extern "C" size_t spw_engine_describe(const spw_engine *e, int tokens, char *text, size_t size) {
  const spw_model_config &c = e->config;
  const int m = tokens < 128 ? 128 : tokens;
  const char *proj = c.quant == SPW_QUANT_Q4_K ? spw_choose_mmq(3 * c.hidden, m, c.hidden).name
                                                : spw_choose_gemm(m, 3 * c.hidden, c.hidden).name;
  const int n = snprintf(text, size, "%s: %d layers, norm %s, qkv %s, %s, top-%d sampling",
                         spw_engine_version(), c.layers, spw_choose_rmsnorm(c.hidden, tokens).name, proj,
                         c.experts ? "routed experts" : "dense ffn", c.top_k);
  return n < 0 ? 0 : (size_t)n;
}
