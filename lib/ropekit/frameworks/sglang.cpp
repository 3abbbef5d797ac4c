// sglang at commit 0b1fd02 (python/sglang/srt/layers/rotary_embedding/factory.py get_rope, yarn.py, rope_variant.py):
// YaRN forwards mscale and mscale_all_dim but not attention_factor (cos and sin times mscale(s, mscale) /
// mscale(s, mscale_all_dim) when both are given, else 0.1 ln s + 1, then attn_factor); DeepSeek and "dynamic" as
// vLLM before PR 41277 (the static base); Phi-3's LongRoPE per batch: any position > original_max_position_embeddings
// switches the whole batch to the long factors (transformers: once a position reaches it); Gemma 4's proportional
// ignores its factor.
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/frameworks/reading.hpp"

namespace ropekit {

FrameworkReading read_sglang(const Model& m, const LayerType& l) {
  using namespace frameworks;
  FrameworkReading r = start(Framework::sglang, "0b1fd02", m, l);
  const auto* s = schedule(l);
  if (!s) return r;
  if (deepseek_yarn(m, l, r)) return r;
  if (const auto* y = std::get_if<scaling::Yarn>(&s->scaling)) {
    const double sf = yarn_factor(*y), af = key(l, "attn_factor").value_or(1);
    const auto ms = key(l, "mscale"), all = key(l, "mscale_all_dim");
    r.cos_sin_factor = (ms && all ? mscale(sf, *ms) / mscale(sf, *all) : mscale(sf)) * af;
    scaling::Yarn v = *y;
    v.attention_factor = r.cos_sin_factor, v.mscale.reset(), v.mscale_all_dim.reset();
    r.encoding = with_scaling(l, v);
    if (y->attention_factor) r.notes.push_back("get_rope does not forward YaRN's attention_factor");
  } else if (static_dynamic(l, r, "sglang's DynamicNTKScalingRotaryEmbedding")) {
  } else if (const auto* lr = std::get_if<scaling::LongRope>(&s->scaling)) {
    const double max = m.context_length ? static_cast<double>(*m.context_length) : lr->max.value_or(lr->orig);
    r.cos_sin_factor = key(l, "short_mscale").value_or(longrope_mscale(max, lr->orig));
    scaling::LongRope v = *lr;
    v.attention_factor = r.cos_sin_factor, v.factor.reset();
    r.encoding = with_scaling(l, v);
    r.notes.push_back(fmt::format("LongRoPE per batch: any position > {} switches every token of the batch to the long "
                                  "factors (transformers: a sequence whose length exceeds {})",
                                  format_number(lr->orig), format_number(lr->orig)));
  } else if (const auto* p = std::get_if<scaling::Proportional>(&s->scaling); p && p->factor != 1) {
    r.encoding = with_scaling(l, scaling::Proportional{1});
    r.notes.push_back(fmt::format("proportional: factor = {} ignored (Gemma4RotaryEmbedding)", format_number(p->factor)));
  }
  return r;
}

}  // namespace ropekit
