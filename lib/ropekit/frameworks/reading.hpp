#pragma once
// One layer type of a config.json as one framework runs it: the encoding it computes (frequencies and the factor on
// cos and sin), its pairing, its logit scale and the rules it applies within a sequence. transformers 5 is the
// reference (the model readers, models/hf_config.cpp); each other framework is a function of transformers' layer
// type and the config's own rope keys (LayerType::rope_keys), one file per framework, following that framework's
// source at the version named in `version` (docs/how-to/frameworks.md lists the files read).

#include <optional>
#include <string>
#include <vector>

#include "ropekit/encoding.hpp"
#include "ropekit/models/model.hpp"

namespace ropekit {

enum class Framework { transformers5, transformers4, vllm, sglang, llamacpp, mlx_lm };

/// What one framework computes for one layer type.
struct FrameworkReading {
  Framework framework = Framework::transformers5;
  std::string version;  ///< the release or commit whose source the rules follow
  Encoding encoding{enc::Nope{}};
  Convention convention = Convention::huggingface;  ///< whose YaRN ramp (llama.cpp: ggml's)
  Pairing pairing = Pairing::half;
  int freq_denominator = 0;   ///< d of theta_i = base^(-2i/d) (the rotated dims; the head for Gemma 4's proportional)
  double cos_sin_factor = 1;  ///< a: cos and sin times a, the logits times a^2
  double softmax_scale = 1;   ///< the logits' multiplier beyond 1/sqrt(head_dim)
  std::vector<std::string> notes;
};

/// "transformers", "vllm", "sglang", "llama.cpp", "mlx-lm" (transformers4: "transformers").
std::string framework_name(Framework f);

/// transformers 5.17: the layer type as the readers build it.
FrameworkReading read_transformers5(const Model& m, const LayerType& l);
/// transformers 4 before the YaRN mscale ratio (4.45): none where it computes what transformers 5 does.
std::optional<FrameworkReading> read_transformers4(const Model& m, const LayerType& l);
FrameworkReading read_vllm(const Model& m, const LayerType& l);
FrameworkReading read_sglang(const Model& m, const LayerType& l);
/// llama.cpp running the GGUF its converter (convert_hf_to_gguf.py) writes from this config.json.
FrameworkReading read_llamacpp(const Model& m, const LayerType& l);
FrameworkReading read_mlx_lm(const Model& m, const LayerType& l);

// Shared by the framework files: the pieces of transformers' reading they start from.
namespace frameworks {

/// The schedule of the encoding's first rotary leaf (rotary_leaves: DeepSeek's decoupled head is rope (+) nope);
/// nullptr for NoPE and other families.
const FrequencySchedule* rotary_schedule(const Encoding& e);
/// The layer type's rope schedule (nullptr for NoPE and other families).
const FrequencySchedule* schedule(const LayerType& l);
/// A number of the config's rope parameters, if given.
std::optional<double> key(const LayerType& l, const std::string& name);
/// transformers' reading as the start of another framework's: encoding, pairing, factors, denominator.
FrameworkReading start(Framework f, std::string version, const Model& m, const LayerType& l);
/// The layer type's encoding with its schedule's scaling replaced (the family and the source kept).
Encoding with_scaling(const LayerType& l, const Scaling& scaling);
/// The layer type's encoding with its geometric base replaced and no scaling (a static NTK base), or its rotated
/// fraction set to `partial` (a framework reading partial_rotary_factor where transformers' class does not).
Encoding with_base(const LayerType& l, double base);
Encoding with_partial(const Encoding& e, double partial);
/// The geometric base and rotated dims of the layer type's schedule (0 when not geometric).
double base_of(const LayerType& l);
/// get_mscale(s, m) = 0.1 m ln s + 1 for s > 1, else 1.
double mscale(double s, double m = 1);
/// Whether the model's attention is DeepSeek's (MLA with deepseek_yarn in vLLM and sglang).
bool deepseek(const Model& m);
/// Phi-3's LongRoPE scale sqrt(1 + ln(max / orig) / ln orig), 1 when max <= orig (the frameworks' and the converter's).
double longrope_mscale(double max, double orig);
/// vLLM's and sglang's shared rules (vllm.cpp): DeepSeek's deepseek_yarn (mscale(s, mscale) / mscale(s, mscale_all_dim)
/// x attn_factor, defaults 1 and 0), and the static "dynamic" base; each returns whether it applied.
bool deepseek_yarn(const Model& m, const LayerType& l, FrameworkReading& r);
bool static_dynamic(const LayerType& l, FrameworkReading& r, const std::string& source);

}  // namespace frameworks

}  // namespace ropekit
