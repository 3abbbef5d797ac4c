// transformers' reading: version 5.17 as the model readers build it (models/hf_config.cpp), and version 4 before
// the YaRN mscale ratio (modeling_rope_utils.py _compute_yarn_parameters at 4.45, commit ef46806: attention_factor,
// else 0.1 ln s + 1; the ramp from max_position_embeddings, not original_max_position_embeddings).
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/frameworks/reading.hpp"

namespace ropekit {

std::string framework_name(Framework f) {
  switch (f) {
    case Framework::transformers5:
    case Framework::transformers4: return "transformers";
    case Framework::vllm: return "vllm";
    case Framework::sglang: return "sglang";
    case Framework::llamacpp: return "llama.cpp";
    case Framework::mlx_lm: return "mlx-lm";
  }
  return "transformers";  // unreachable: every enumerator is named above
}

namespace frameworks {

const FrequencySchedule* rotary_schedule(const Encoding& e) {
  const auto leaves = rotary_leaves(e);
  return leaves.empty() ? nullptr : schedule_of(*leaves.front());
}

const FrequencySchedule* schedule(const LayerType& l) { return rotary_schedule(l.encoding); }

std::optional<double> key(const LayerType& l, const std::string& name) {
  const auto it = l.rope_keys.find(name);
  if (it == l.rope_keys.end()) return std::nullopt;
  return it->second;
}

double mscale(double s, double m) { return s <= 1 ? 1 : 0.1 * m * std::log(s) + 1; }

double longrope_mscale(double max, double orig) {
  const double s = max / orig;
  return s <= 1 ? 1 : std::sqrt(1 + std::log(s) / std::log(orig));
}

bool deepseek(const Model& m) { return m.model_type.rfind("deepseek", 0) == 0 || m.model_type == "kimi_k2"; }

Encoding with_scaling(const LayerType& l, const Scaling& scaling) {
  Encoding e = l.encoding;
  if (auto* s = const_cast<FrequencySchedule*>(rotary_schedule(e))) s->scaling = scaling;
  return e;
}

Encoding with_base(const LayerType& l, double base) {
  Encoding e = l.encoding;
  if (auto* s = const_cast<FrequencySchedule*>(rotary_schedule(e))) {
    if (auto* g = std::get_if<Geometric>(&s->source)) g->base = base;
    s->scaling = scaling::None{};
  }
  return e;
}

Encoding with_partial(const Encoding& in, double partial) {
  Encoding e = in;
  if (auto* s = const_cast<FrequencySchedule*>(rotary_schedule(e)))
    if (auto* g = std::get_if<Geometric>(&s->source)) {
      g->partial = partial;
      g->count = default_count(*g);
    }
  return e;
}

double base_of(const LayerType& l) {
  const auto* s = rotary_schedule(l.encoding);
  const auto* g = s ? std::get_if<Geometric>(&s->source) : nullptr;
  return g ? g->base : 0;
}

FrameworkReading start(Framework f, std::string version, const Model&, const LayerType& l) {
  FrameworkReading r;
  r.framework = f;
  r.version = std::move(version);
  r.encoding = l.encoding;
  r.pairing = l.pairing;
  r.cos_sin_factor = l.attention_factor;
  r.softmax_scale = l.softmax_scale;
  r.freq_denominator = l.rotary_dims;
  if (const auto* s = schedule(l))
    if (std::holds_alternative<scaling::Proportional>(s->scaling)) r.freq_denominator = l.head_dim;
  return r;
}

}  // namespace frameworks

FrameworkReading read_transformers5(const Model& m, const LayerType& l) {
  return frameworks::start(Framework::transformers5, "5.17", m, l);
}

std::optional<FrameworkReading> read_transformers4(const Model& m, const LayerType& l) {
  const auto* s = frameworks::schedule(l);
  const auto* y = s ? std::get_if<scaling::Yarn>(&s->scaling) : nullptr;
  // DeepSeek-V3 entered transformers (4.51) after the mscale ratio: the early rule never ran it.
  if (!y || frameworks::deepseek(m)) return std::nullopt;
  FrameworkReading r = frameworks::start(Framework::transformers4, "4.45", m, l);
  scaling::Yarn old = *y;
  const double sf = yarn_factor(*y);
  old.mscale.reset(), old.mscale_all_dim.reset(), old.truncate = true;
  r.cos_sin_factor = y->attention_factor.value_or(frameworks::mscale(sf));
  old.attention_factor = r.cos_sin_factor;
  if (m.context_length) old.orig = static_cast<double>(*m.context_length);
  r.encoding = frameworks::with_scaling(l, old);
  if (old.orig == y->orig && r.cos_sin_factor == l.attention_factor && y->truncate) return std::nullopt;
  r.notes.push_back(fmt::format("YaRN's ramp from max_position_embeddings = {} (transformers 5: original_max_position_"
                                "embeddings = {}){}; attention_factor, else 0.1 ln s + 1 = {} (no mscale ratio)",
                                format_number(old.orig), format_number(y->orig), y->truncate ? "" : ", no truncate key",
                                format_significant(r.cos_sin_factor, 8)));
  return r;
}

}  // namespace ropekit
