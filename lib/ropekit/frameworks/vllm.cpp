// vLLM 0.25.0 (vllm/model_executor/layers/rotary_embedding/__init__.py get_rope and the scheme files beside it;
// models/deepseek_v2.py): YaRN forwards only attn_factor, extrapolation_factor, beta_fast, beta_slow,
// apply_yarn_scaling and truncate (yarn_scaling_rope.py: cos and sin times (0.1 ln s + 1) attn_factor, config
// attention_factor, mscale and mscale_all_dim dropped: vllm issues 48621, 48351); DeepSeek's deepseek_yarn takes
// mscale(s, mscale) / mscale(s, mscale_all_dim) x attn_factor (defaults 1 and 0); "dynamic" is the static base
// b (s^2 - s + 1)^(d/(d-2)) of dynamic_ntk_scaling_rope.py before PR 41277 (issue 41236), b alpha^(d/(d-2)) with an
// alpha key (dynamic_ntk_alpha_rope.py); Phi-3's LongRoPE takes the long factors for every token when max_model_len
// exceeds original_max_position_embeddings (PR 27431), scaled by sqrt(1 + ln(max/orig)/ln orig) or the
// short_mscale / long_mscale keys; rotary_dim = int(head_size x partial_rotary_factor) for every model.
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/frameworks/reading.hpp"

namespace ropekit {

namespace frameworks {

// The shared rules of vLLM and sglang where they agree (DeepSeek's YaRN, the static "dynamic" base).
bool deepseek_yarn(const Model& m, const LayerType& l, FrameworkReading& r) {
  const auto* s = schedule(l);
  const auto* y = s ? std::get_if<scaling::Yarn>(&s->scaling) : nullptr;
  if (!y || !deepseek(m)) return false;
  const double sf = yarn_factor(*y), af = key(l, "attn_factor").value_or(1);
  r.cos_sin_factor = mscale(sf, key(l, "mscale").value_or(1)) / mscale(sf, key(l, "mscale_all_dim").value_or(0)) * af;
  scaling::Yarn v = *y;
  v.attention_factor = r.cos_sin_factor, v.mscale.reset(), v.mscale_all_dim.reset(), v.truncate = true;
  r.encoding = with_scaling(l, v);
  return true;
}

bool static_dynamic(const LayerType& l, FrameworkReading& r, const std::string& source) {
  const auto* s = schedule(l);
  const auto* d = s ? std::get_if<scaling::Dynamic>(&s->scaling) : nullptr;
  if (!d || r.freq_denominator < 3) return false;
  const double dims = r.freq_denominator, e = dims / (dims - 2);
  const auto alpha = key(l, "alpha");
  const double mult = alpha ? std::pow(*alpha, e) : std::pow(d->factor * d->factor - d->factor + 1, e);
  r.encoding = with_base(l, base_of(l) * mult);
  r.notes.push_back(alpha ? fmt::format("dynamic with alpha = {}: a static base x alpha^(d/(d-2)) = x {} ({})",
                                        format_number(*alpha), format_significant(mult, 6), source)
                          : fmt::format("dynamic: a static base x (s^2 - s + 1)^(d/(d-2)) = x {} at every length, where "
                                        "transformers rescales only past max_position_embeddings ({})",
                                        format_significant(mult, 6), source));
  return true;
}

}  // namespace frameworks

FrameworkReading read_vllm(const Model& m, const LayerType& l) {
  using namespace frameworks;
  FrameworkReading r = start(Framework::vllm, "0.25.0", m, l);
  const auto* s = schedule(l);
  if (!s) return r;
  if (const auto p = key(l, "partial_rotary_factor"); p && *p < 1 && l.rotary_dims == l.head_dim) {
    r.encoding = with_partial(r.encoding, *p);
    r.freq_denominator = static_cast<int>(l.head_dim * *p);
    r.notes.push_back(fmt::format("rotary_dim = int(head_size x partial_rotary_factor) = {} (transformers' class rotates "
                                  "the whole head)", r.freq_denominator));
  }
  if (deepseek_yarn(m, l, r)) return r;
  if (const auto* y = std::get_if<scaling::Yarn>(&s->scaling)) {
    const double af = key(l, "attn_factor").value_or(1);
    r.cos_sin_factor = mscale(yarn_factor(*y)) * af;
    scaling::Yarn v = *y;
    v.attention_factor = r.cos_sin_factor, v.mscale.reset(), v.mscale_all_dim.reset();
    r.encoding = with_scaling(l, v);
    if (y->attention_factor || y->mscale || y->mscale_all_dim)
      r.notes.push_back("get_rope drops YaRN's attention_factor, mscale and mscale_all_dim: cos and sin times "
                        "(0.1 ln s + 1) x attn_factor (vllm issues 48621, 48351)");
  } else if (static_dynamic(l, r, "vLLM before PR 41277, issue 41236")) {
  } else if (const auto* lr = std::get_if<scaling::LongRope>(&s->scaling)) {
    const double max = m.context_length ? static_cast<double>(*m.context_length) : lr->max.value_or(lr->orig);
    const bool longs = max > lr->orig;
    r.cos_sin_factor = key(l, longs ? "long_mscale" : "short_mscale")
                           .value_or(longrope_mscale(max, lr->orig));
    scaling::LongRope v = *lr;
    if (longs) v.short_factor = v.long_factor;
    v.attention_factor = r.cos_sin_factor, v.factor.reset();
    r.encoding = with_scaling(l, v);
    r.notes.push_back(fmt::format("LongRoPE: the {} factors for every token (max_model_len {} {} original_max_position_"
                                  "embeddings {}, decided once: PR 27431; before it, per batch)",
                                  longs ? "long" : "short", format_number(max), longs ? ">" : "<=", format_number(lr->orig)));
  }
  return r;
}

}  // namespace ropekit
