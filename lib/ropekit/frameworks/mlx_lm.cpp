// mlx-lm at commit d78bf58 (mlx_lm/models/rope_utils.py initialize_rope, YarnRoPE, SuScaledRoPE; the model files):
// YaRN's factor on the rotated dims is mscale(s, mscale) / mscale(s, mscale_all_dim) with defaults 1 and 0,
// attention_factor and truncate unread (its 4096 default for a dict without original_max_position_embeddings is not
// modelled: LayerType::rope_keys is transformers' standardized dict, which fills that key); LongRoPE
// always takes the long factors (SuScaledRoPE), scaled by long_mscale or sqrt(1 + ln(max/orig)/ln orig); partial
// rotary is each model file's (glm.py rotates the whole head: mlx-lm PR 1698, closed).
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/frameworks/reading.hpp"

namespace ropekit {

FrameworkReading read_mlx_lm(const Model& m, const LayerType& l) {
  using namespace frameworks;
  FrameworkReading r = start(Framework::mlx_lm, "d78bf58", m, l);
  const auto* s = schedule(l);
  if (!s) return r;
  if (m.model_type == "glm" && l.rotary_dims < l.head_dim) {
    r.encoding = with_partial(r.encoding, 1);
    r.freq_denominator = l.head_dim;
    r.notes.push_back("glm.py rotates the whole head: partial_rotary_factor unread (mlx-lm PR 1698, closed)");
  }
  if (const auto* y = std::get_if<scaling::Yarn>(&s->scaling)) {
    const double sf = yarn_factor(*y);
    r.cos_sin_factor = mscale(sf, key(l, "mscale").value_or(1)) / mscale(sf, key(l, "mscale_all_dim").value_or(0));
    scaling::Yarn v = *y;
    v.attention_factor = r.cos_sin_factor, v.mscale.reset(), v.mscale_all_dim.reset(), v.truncate = true;
    r.encoding = with_scaling(l, v);
    if (y->attention_factor) r.notes.push_back("YarnRoPE does not read attention_factor");
    if (!y->truncate) r.notes.push_back("YarnRoPE does not read truncate = false: the correction dims floored and ceiled");
  } else if (const auto* lr = std::get_if<scaling::LongRope>(&s->scaling)) {
    const double max = m.context_length ? static_cast<double>(*m.context_length) : lr->max.value_or(lr->orig);
    r.cos_sin_factor = key(l, "long_mscale").value_or(longrope_mscale(max, lr->orig));
    scaling::LongRope v = *lr;
    v.short_factor = v.long_factor, v.attention_factor = r.cos_sin_factor, v.factor.reset();
    r.encoding = with_scaling(l, v);
    r.notes.push_back("SuScaledRoPE: the long factors at every position");
  }
  return r;
}

}  // namespace ropekit
