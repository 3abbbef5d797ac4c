#include "ropekit/models/non_rope.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit::hf {

namespace {

constexpr std::int64_t kMaxHeads = 1 << 16;

// float32 x^k as torch.pow of a float32 base by an integer tensor computes it (the float64 power, rounded once).
float pow32(float base, int k) { return static_cast<float>(std::pow(static_cast<double>(base), k)); }

// bfloat16 rounding (to nearest, ties to even) of a float32: Falcon multiplies its slopes in bfloat16.
float bf16(float v) {
  auto b = std::bit_cast<std::uint32_t>(v);
  b += 0x7fffu + ((b >> 16) & 1u);
  return std::bit_cast<float>(b & 0xffff0000u);
}

// Decoder LMs whose positions are learned absolute embeddings added to the input (their modeling files).
const std::map<std::string, std::string> kLearned = {
    {"opt", "OPT (OPTLearnedPositionalEmbedding)"},      {"gpt2", "GPT-2 (wpe)"},
    {"gpt_neo", "GPT-Neo (wpe)"},                        {"gpt_bigcode", "GPTBigCode (wpe)"},
    {"biogpt", "BioGPT (BioGptLearnedPositionalEmbedding)"},
};

// transformers classes that rotate by default, at rope_theta's class default (10000) when the key is absent.
const std::set<std::string> kRopeClasses = {
    "llama",      "llama4",       "llama4_text", "mistral",   "ministral",   "mixtral",     "qwen2",       "qwen2_moe",
    "qwen3",      "qwen3_moe",    "qwen3_next",  "qwen2_vl",  "qwen2_5_vl",  "qwen3_vl",    "gemma",       "gemma2",
    "gemma3",     "gemma3_text",  "gemma4",      "gemma4_text", "phi",       "phi3",        "gpt_neox",    "gptj",
    "codegen",    "stablelm",     "persimmon",   "starcoder2", "olmo",       "olmo2",       "cohere",      "cohere2",
    "deepseek_v2", "deepseek_v3", "exaone4",     "falcon",    "falcon_h1",   "gpt_oss",     "glm4",        "smollm3",
    "granite",    "nemotron"};

// Keys that state a rotary encoding (their presence, even as null: rope_scaling null is a RoPE config's).
const char* const kRotaryKeys[] = {"rope_theta",   "rope_scaling", "rope_parameters", "rotary_emb_base", "rotary_pct",
                                   "rotary_dim",   "partial_rotary_factor", "qk_rope_head_dim", "rope_local_base_freq"};

// The first of `keys` that is given, as an integer in [1, max].
std::optional<std::int64_t> first_int(const Reader& r, const json& cfg, std::initializer_list<const char*> keys,
                                      std::int64_t max) {
  for (const char* k : keys)
    if (const auto v = r.integer(cfg, k, 1, max)) return v;
  return std::nullopt;
}

struct AlibiHeads {
  std::string model;       // "BLOOM", ...
  std::string how;         // where the slopes come from
  std::vector<double> slopes;
  int head_dim = 0;
  std::optional<std::int64_t> layers;
  double softmax_scale = 1;
  std::vector<std::string> notes;
};

Model alibi_model(const Reader& r, const AlibiHeads& a, Model m) {
  const int heads = static_cast<int>(a.slopes.size());
  m.notes.push_back(fmt::format("ALiBi ({}): head h adds -m_h x lag to its logits, no rotation; one layer type per head, "
                                "slopes {}",
                                a.model, a.how));
  for (const auto& n : a.notes) m.notes.push_back(n);
  for (int h = 0; h < heads; ++h) {
    LayerType l;
    l.name = fmt::format("full_attention/head_{}", h);
    l.layers = a.layers ? static_cast<int>(*a.layers) : 0;
    const double slope = a.slopes[static_cast<std::size_t>(h)];
    if (!(slope > 0) || !std::isfinite(slope))  // the alibi family's rule on slope
      throw_bad_value(Where(fmt::format("{}: layer type {}", r.source(), l.name)), "alibi.slope", format_number(slope),
                      "finite and > 0");
    l.encoding = {enc::Alibi{slope}};
    l.head_dim = a.head_dim;
    l.rotary_dims = 0;
    l.softmax_scale = a.softmax_scale;
    m.layer_types.push_back(std::move(l));
  }
  return m;
}

// Head count and head size from the first of each key list (the classes' attribute maps), both required.
void heads_and_dim(const Reader& r, const json& cfg, std::initializer_list<const char*> head_keys,
                   std::initializer_list<const char*> hidden_keys, const std::string& model, int& heads, int& head_dim) {
  const auto n = first_int(r, cfg, head_keys, kMaxHeads);
  const auto hidden = first_int(r, cfg, hidden_keys, std::int64_t{1} << 30);
  if (!n) r.missing(*head_keys.begin(), fmt::format("{} needs its head count for the ALiBi slopes", model));
  if (!hidden) r.missing(*hidden_keys.begin(), fmt::format("{} needs its hidden size for the head size", model));
  if (*hidden % *n != 0)
    r.bad(*hidden_keys.begin(), json(*hidden), fmt::format("divisible by the head count {}", *n));
  heads = static_cast<int>(*n);
  head_dim = static_cast<int>(*hidden / *n);
}

}  // namespace

std::vector<float> bloom_alibi_slopes(int heads) {
  const int c = static_cast<int>(std::bit_floor(static_cast<unsigned>(heads)));
  // base = 2^(-(2^-(log2 c - 3))) = 2^(-8/c), a Python float made a float32 tensor; likewise 2^(-4/c).
  const float base = static_cast<float>(std::exp2(-8.0 / c)), extra = static_cast<float>(std::exp2(-4.0 / c));
  std::vector<float> out;
  for (int k = 1; k <= c; ++k) out.push_back(pow32(base, k));
  for (int j = 0; j < std::min(c, heads - c); ++j) out.push_back(pow32(extra, 2 * j + 1));
  return out;
}

std::vector<float> mpt_alibi_slopes(int heads, double alibi_bias_max) {
  const int c = static_cast<int>(std::bit_ceil(static_cast<unsigned>(heads)));
  // m = arange(1, c + 1) * (alibi_bias_max / c) in float32, slopes = 1 / 2^m in float32.
  const float step = static_cast<float>(alibi_bias_max / c);
  std::vector<float> all;
  for (int k = 1; k <= c; ++k) {
    const float m = static_cast<float>(k) * step;
    all.push_back(1.0f / static_cast<float>(std::exp2(static_cast<double>(m))));
  }
  if (c == heads) return all;
  std::vector<float> out;
  for (int i = 1; i < c; i += 2) out.push_back(all[static_cast<std::size_t>(i)]);
  for (int i = 0; i < c; i += 2) out.push_back(all[static_cast<std::size_t>(i)]);
  out.resize(static_cast<std::size_t>(heads));
  return out;
}

std::optional<Model> read_non_rope(const Reader& r, const json& cfg, Model m) {
  const std::string& type = m.model_type;
  if (const auto it = kLearned.find(type); it != kLearned.end())
    r.bad("model_type", json(type),
          fmt::format("a model with a relative position encoding (RoPE, ALiBi or NoPE layers): {} adds learned absolute "
                      "position embeddings to its input, which no ropekit encoding describes",
                      it->second));
  AlibiHeads a;
  int heads = 0;
  if (type == "bloom") {
    // BloomAttention: alibi.baddbmm(q, k^T, beta=1, alpha=1/sqrt(d)): the bias is added to the scaled logits.
    heads_and_dim(r, cfg, {"n_head", "num_attention_heads"}, {"hidden_size", "n_embed"}, "BLOOM", heads, a.head_dim);
    a.model = "BLOOM";
    a.how = "as modeling_bloom.py's build_alibi_tensor computes them in float32";
    for (float s : bloom_alibi_slopes(heads)) a.slopes.push_back(s);
    a.layers = first_int(r, cfg, {"n_layer", "num_hidden_layers"}, 1 << 20);
    return alibi_model(r, a, std::move(m));
  }
  if (type == "mpt") {
    // MptModel builds the bias whatever attn_config.alibi says; MptAttention adds it after the softmax scale.
    heads_and_dim(r, cfg, {"n_heads", "num_attention_heads"}, {"d_model", "hidden_size"}, "MPT", heads, a.head_dim);
    json attn = json::object();
    if (const auto it = cfg.find("attn_config"); it != cfg.end() && !it->is_null()) {
      if (!it->is_object()) r.bad("attn_config", *it, "an object");
      attn = *it;
    }
    const double bias_max = r.positive(attn, "alibi_bias_max").value_or(8);
    if (const auto scale = r.positive(attn, "softmax_scale")) {
      a.softmax_scale = *scale * std::sqrt(static_cast<double>(a.head_dim));
      a.notes.push_back(fmt::format("attn_config.softmax_scale = {}: the logits are q.k x {} instead of q.k / sqrt({})",
                                    format_number(*scale), format_number(*scale), a.head_dim));
    }
    if (r.boolean(attn, "alibi") == false)
      a.notes.push_back("attn_config.alibi = false: transformers' MptModel adds the ALiBi bias whatever the key says");
    a.model = "MPT";
    a.how = fmt::format("as modeling_mpt.py's build_mpt_alibi_tensor computes them in float32 (alibi_bias_max = {})",
                        format_number(bias_max));
    for (float s : mpt_alibi_slopes(heads, bias_max)) a.slopes.push_back(s);
    a.layers = first_int(r, cfg, {"n_layers", "num_hidden_layers"}, 1 << 20);
    m.context_length = r.integer(cfg, "max_seq_len", 1, std::int64_t{1} << 53);
    return alibi_model(r, a, std::move(m));
  }
  if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") {
    if (!r.boolean(cfg, "alibi").value_or(false)) return std::nullopt;  // FalconConfig's default: rotary
    heads_and_dim(r, cfg, {"num_attention_heads", "n_head"}, {"hidden_size", "n_embed"}, "Falcon", heads, a.head_dim);
    // build_alibi_tensor multiplies the slopes in bfloat16; FalconAttention adds the bias to q.k and scales the sum
    // by 1/sqrt(head_dim), so the bias per token of lag is bf16(m) / sqrt(head_dim).
    a.model = "Falcon, alibi = true";
    a.how = fmt::format("as modeling_falcon.py computes them: BLOOM's, rounded to bfloat16, divided by sqrt({}) (the "
                        "bias is scaled with the logits)",
                        a.head_dim);
    for (float s : bloom_alibi_slopes(heads))
      a.slopes.push_back(static_cast<double>(bf16(s)) / std::sqrt(static_cast<double>(a.head_dim)));
    a.notes.push_back("Falcon also rounds each product slope x key position to bfloat16 (8 significant bits), which "
                      "the slope alone does not model");
    a.layers = first_int(r, cfg, {"num_hidden_layers", "n_layer"}, 1 << 20);
    return alibi_model(r, a, std::move(m));
  }
  return std::nullopt;
}

void check_rope_stated(const Reader& r, const json& cfg, const std::string& model_type) {
  if (kRopeClasses.count(model_type)) return;
  for (const char* k : kRotaryKeys)
    if (cfg.contains(k)) return;
  r.bad("model_type", json(model_type.empty() ? std::string("(absent)") : model_type),
        "a model class known to use RoPE, or a config that states its rotary encoding (rope_theta, rope_scaling or "
        "rope_parameters): without either, RoPE at base 10000 would be a guess");
}

}  // namespace ropekit::hf
