// llama.cpp running the GGUF its converter writes from this config.json (convert_hf_to_gguf.py at commit 0024aa7:
// TextModel.set_gguf_parameters, LlamaModel.generate_extra_tensors, Phi3MiniModel, DeepseekV2Model; the loader rules
// of models/gguf_arch.hpp). YaRN: factor, original context and attn_factor = attention_factor (else attn_factor) are
// written, mscale and mscale_all_dim are not: cos and sin times attn_factor (1 + 0.1 ln s), on ggml's ramp; DeepSeek:
// yarn_log_multiplier = 0.1 mscale_all_dim, cos and sin at attn_factor, the logits (attn_factor mscale(s,
// mscale_all_dim))^2; llama3: a rope_freqs tensor computed in float32 with original_max_position_embeddings from the
// config's top level (8192 when absent there); dynamic: nothing written, the base runs unscaled; LongRoPE: the long
// factors whenever the context per sequence exceeds the original (llama.cpp issue 24823), attn_factor
// sqrt(1 + ln(max/orig)/ln orig); Gemma 4's proportional factor unread; Gemma 3's sliding layers at base 10000.
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/frameworks/reading.hpp"
#include "ropekit/models/gguf_arch.hpp"

namespace ropekit {

namespace {

// The GGUF architecture convert_hf_to_gguf.py writes for a config's model_type (the ones that differ in name).
std::string gguf_arch_of(const std::string& model_type) {
  static const std::map<std::string, std::string> names = {
      {"mistral", "llama"},       {"gemma3_text", "gemma3"}, {"deepseek_v3", "deepseek2"}, {"deepseek_v2", "deepseek2"},
      {"gpt_oss", "gpt-oss"},     {"gpt_neox", "gptneox"},   {"llama4_text", "llama4"},    {"phi", "phi2"},
      {"qwen2_vl", "qwen2vl"},    {"qwen2_moe", "qwen2moe"}, {"qwen3_moe", "qwen3moe"},    {"gemma4_text", "gemma4"}};
  const auto it = names.find(model_type);
  return it == names.end() ? model_type : it->second;
}

// LlamaModel.generate_extra_tensors: rope_freqs[i] = 1, factor or 1 / ((1 - smooth) / factor + smooth) by the
// wavelength of freq_i = 1 / base^(2i/d), every step in float32 (torch tensors of dtype float32).
std::vector<double> converter_llama3_theta(const scaling::Llama3& s, double base, int dims) {
  std::vector<double> theta;
  const float old_context = 8192.0f, low = static_cast<float>(s.low), high = static_cast<float>(s.high);
  const float factor = static_cast<float>(s.factor);
  for (int i = 0; 2 * i < dims; ++i) {
    const float freq = 1.0f / std::pow(static_cast<float>(base), static_cast<float>(2 * i) / static_cast<float>(dims));
    const float wavelen = static_cast<float>(2 * M_PI) / freq;
    float f = 1;
    if (wavelen > old_context / low) {
      f = factor;
    } else if (wavelen >= old_context / high) {
      const float smooth = (old_context / wavelen - low) / (high - low);
      f = 1.0f / ((1 - smooth) / factor + smooth);
    }
    theta.push_back(std::pow(base, -2.0 * i / dims) / static_cast<double>(f));
  }
  return theta;
}

}  // namespace

FrameworkReading read_llamacpp(const Model& m, const LayerType& l) {
  using namespace frameworks;
  FrameworkReading r = start(Framework::llamacpp, "master 2026-11", m, l);
  r.convention = Convention::ggml;
  const std::string arch = gguf_arch_of(m.model_type);
  if (const auto a = gguf_arch(arch); a && (a->rope == GgmlRopeType::norm || a->rope == GgmlRopeType::neox))
    r.pairing = a->rope == GgmlRopeType::norm ? Pairing::adjacent : Pairing::half;
  const auto* s = schedule(l);
  if (!s) return r;
  if (arch == "gemma3" && l.window.kind == Window::Kind::sliding && base_of(l) != 10000) {
    r.encoding = with_base(l, 10000);
    r.notes.push_back("gemma3: llama.cpp runs the sliding layers at base 10000, unscaled (hard-coded in its loader)");
    return r;
  }
  const double raf = key(l, "attention_factor").value_or(key(l, "attn_factor").value_or(1));
  if (const auto* y = std::get_if<scaling::Yarn>(&s->scaling)) {
    scaling::Yarn v = *y;
    v.mscale.reset(), v.mscale_all_dim.reset(), v.truncate = true;
    if (arch == "deepseek2") {
      r.cos_sin_factor = raf;
      r.softmax_scale = l.softmax_scale * raf * raf;  // (attn_factor mscale(s, mscale_all_dim))^2
    } else {
      r.cos_sin_factor = raf * mscale(yarn_factor(*y));
      if (y->mscale || y->mscale_all_dim)
        r.notes.push_back("the converter writes no mscale or mscale_all_dim: cos and sin times attn_factor (1 + 0.1 ln s)");
    }
    v.attention_factor = r.cos_sin_factor;
    r.encoding = with_scaling(l, v);
    r.notes.push_back(y->truncate ? "YaRN on ggml's ramp (ggml_rope_yarn_corr_dims)"
                                  : "YaRN on ggml's ramp (ggml_rope_yarn_corr_dims): truncate = false unread, the "
                                    "correction dims floored and ceiled");
  } else if (const auto* d = std::get_if<scaling::Dynamic>(&s->scaling)) {
    r.encoding = with_scaling(l, scaling::None{});
    r.notes.push_back(fmt::format("dynamic: the converter writes no scaling; llama.cpp runs the base unscaled (factor {} "
                                  "unread)", format_number(d->factor)));
  } else if (const auto* ll = std::get_if<scaling::Llama3>(&s->scaling)) {
    const auto* g = std::get_if<Geometric>(&s->source);
    if (g) {
      enc::Rope rope;
      rope.freqs.source = ExplicitFrequencies{converter_llama3_theta(*ll, g->base, l.rotary_dims)};
      r.encoding = {rope};
      r.notes.push_back(fmt::format("llama3: the converter's rope_freqs tensor, computed in float32 with original_max_"
                                    "position_embeddings from the config's top level (8192 when absent there; the "
                                    "file's rope_scaling says {})", format_number(ll->orig)));
    }
  } else if (const auto* lr = std::get_if<scaling::LongRope>(&s->scaling)) {
    const double max = m.context_length ? static_cast<double>(*m.context_length) : lr->max.value_or(lr->orig);
    r.cos_sin_factor = longrope_mscale(max, lr->orig);
    scaling::LongRope v = *lr;
    if (max > lr->orig) v.short_factor = v.long_factor;
    v.attention_factor = r.cos_sin_factor, v.factor.reset();
    r.encoding = with_scaling(l, v);
    r.notes.push_back(fmt::format("LongRoPE: the long factors for every position when the context per sequence exceeds "
                                  "{} (llama_model::get_rope_factors; the default context {} does), cos and sin "
                                  "times the converter's sqrt(1 + ln(max/orig)/ln orig)",
                                  format_number(lr->orig), format_number(max)));
  } else if (const auto* p = std::get_if<scaling::Proportional>(&s->scaling); p && p->factor != 1) {
    r.encoding = with_scaling(l, scaling::Proportional{1});
    r.notes.push_back(fmt::format("proportional: factor = {} unread by the converter", format_number(p->factor)));
  } else if (raf != 1 && std::holds_alternative<scaling::Linear>(s->scaling)) {
    r.cos_sin_factor = raf;
  }
  return r;
}

}  // namespace ropekit
