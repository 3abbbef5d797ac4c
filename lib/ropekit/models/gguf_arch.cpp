#include "ropekit/models/gguf_arch.hpp"

#include <algorithm>
#include <array>

namespace ropekit {

namespace {

using enum GgmlRopeType;
using Kind = Window::Kind;

// Every name of llama.cpp's LLM_ARCH_NAMES (src/llama-arch.cpp, master of 2026) with its llama_model_rope_type
// where ropekit has it on record (NORM, NEOX and NONE lists of src/llama-model.cpp); `unlisted` otherwise.
struct Named {
  std::string_view name;
  GgmlRopeType rope;
};
constexpr auto kNames = std::to_array<Named>({
    {"clip", none}, {"llama", norm}, {"llama4", norm}, {"deci", norm}, {"falcon", neox}, {"grok", neox},
    {"gpt2", none}, {"gptj", unlisted}, {"gptneox", neox}, {"mpt", none}, {"baichuan", norm},
    {"starcoder", norm}, {"refact", none}, {"bert", neox}, {"modern-bert", unlisted}, {"nomic-bert", unlisted},
    {"nomic-bert-moe", unlisted}, {"neo-bert", norm}, {"jina-bert-v2", none}, {"jina-bert-v3", unlisted},
    {"eurobert", unlisted}, {"bloom", none}, {"stablelm", unlisted}, {"qwen", neox}, {"qwen2", neox},
    {"qwen2moe", neox}, {"qwen2vl", mrope}, {"qwen3", neox}, {"qwen3moe", neox}, {"qwen3next", neox},
    {"qwen3vl", unlisted}, {"qwen3vlmoe", unlisted}, {"qwen35", unlisted}, {"qwen35moe", unlisted}, {"phi2", neox},
    {"phi3", neox}, {"phimoe", neox}, {"plamo", unlisted}, {"plamo2", unlisted}, {"plamo3", unlisted},
    {"codeshell", unlisted}, {"orion", unlisted}, {"internlm2", norm}, {"minicpm", norm}, {"minicpm3", neox},
    {"gemma", neox}, {"gemma2", neox}, {"gemma3", neox}, {"gemma3n", neox}, {"gemma4", unlisted},
    {"gemma4-assistant", unlisted}, {"gemma-embedding", unlisted}, {"starcoder2", neox}, {"mamba", none},
    {"mamba2", none}, {"jamba", unlisted}, {"falcon-h1", unlisted}, {"xverse", norm}, {"command-r", norm},
    {"cohere2", norm}, {"cohere2moe", unlisted}, {"dbrx", neox}, {"olmo", norm}, {"olmo2", neox}, {"olmoe", unlisted},
    {"openelm", unlisted}, {"arctic", norm}, {"deepseek", norm}, {"deepseek2", norm}, {"deepseek2-ocr", unlisted},
    {"deepseek32", unlisted}, {"deepseek4", unlisted}, {"chatglm", norm}, {"glm4", norm}, {"glm4moe", neox},
    {"glm-dsa", unlisted}, {"bitnet", unlisted}, {"t5", none}, {"t5encoder", none}, {"jais", none},
    {"jais2", unlisted}, {"nemotron", unlisted}, {"nemotron_h", unlisted}, {"nemotron_h_moe", unlisted},
    {"exaone", neox}, {"exaone4", neox}, {"exaone-moe", unlisted}, {"rwkv6", none}, {"rwkv6qwen2", none},
    {"rwkv7", none}, {"arwkv7", none}, {"granite", norm}, {"granitemoe", norm}, {"granitehybrid", norm},
    {"chameleon", norm}, {"wavtokenizer-dec", none}, {"plm", norm}, {"bailingmoe", norm}, {"bailingmoe2", unlisted},
    {"dots1", unlisted}, {"arcee", norm}, {"afmoe", unlisted}, {"laguna", unlisted}, {"ernie4_5", norm},
    {"ernie4_5-moe", norm}, {"hunyuan-moe", unlisted}, {"hunyuan-dense", unlisted}, {"hunyuan_vl", unlisted},
    {"hy_v3", unlisted}, {"smollm3", norm}, {"gpt-oss", neox}, {"lfm2", unlisted}, {"lfm2moe", unlisted},
    {"dream", unlisted}, {"smallthinker", unlisted}, {"llada", norm}, {"llada-moe", unlisted}, {"seed_oss", neox},
    {"grovemoe", unlisted}, {"apertus", unlisted}, {"minimax-m2", unlisted}, {"cogvlm", unlisted}, {"rnd1", unlisted},
    {"pangu-embedded", unlisted}, {"mistral3", unlisted}, {"eagle3", unlisted}, {"dflash", unlisted},
    {"mistral4", unlisted}, {"paddleocr", unlisted}, {"mimo2", neox}, {"step35", unlisted}, {"llama-embed", unlisted},
    {"maincoder", unlisted}, {"kimi-linear", unlisted}, {"talkie", unlisted}, {"mellum", unlisted},
});

// The architectures whose load_hparams case (or graph) changes what the general keys say.
GgufArch rules(GgufArch a) {
  const std::string_view n = a.name;
  if (n == "llama" || n == "deci" || n == "falcon") a.rot_is_head = true;  // "invalid n_rot: %u, expected %u"
  if (n == "gemma2") {  // STANDARD, set_swa_pattern(2), n_swa 4096 unless the key says; Q *= f_attention_scale
    a.swa = Kind::sliding, a.pattern = 2, a.window_default = 4096, a.gemma_query_scale = true, a.layers_27b = 46;
  } else if (n == "gemma3") {  // set_swa_pattern(6); rope_freq_base_train_swa = 10000, rope_freq_scale_train_swa = 1
    a.swa = Kind::sliding, a.pattern = 6, a.window_required = true, a.swa_rope_fixed = true;
    a.gemma_query_scale = true, a.layers_27b = 62;
  } else if (n == "gpt-oss") {  // set_swa_pattern(2) (or the pattern key); build_attn(..., 1/sqrtf(n_rot))
    a.swa = Kind::sliding, a.pattern = 2, a.window_required = true, a.swa_base_key = true, a.kq_scale_n_rot = true;
  } else if (n == "cohere2") {  // set_swa_pattern(4); cohere2-iswa.cpp ropes the sliding layers only
    a.swa = Kind::sliding, a.pattern = 4, a.window_required = true, a.full_layers_nope = true;
  } else if (n == "llama4") {  // CHUNKED 8192, set_swa_pattern(4), n_no_rope_layer_step 4
    a.swa = Kind::chunked, a.pattern = 4, a.nope_step = 4, a.llama4_chunks = true;
  } else if (n == "smollm3") {
    a.nope_step = 4;
  } else if (n == "phi3") {
    a.phi3_swa_disabled = true;
  } else if (n == "deepseek2" || n == "deepseek2-ocr" || n == "deepseek32" || n == "glm-dsa" || n == "kimi-linear") {
    a.yarn_log_multiplier = true;
  } else if (n == "grok") {
    a.yarn_betas = true;
  }
  return a;
}

}  // namespace

std::optional<GgufArch> gguf_arch(std::string_view arch) {
  const auto it = std::find_if(kNames.begin(), kNames.end(), [&](const Named& n) { return n.name == arch; });
  if (it == kNames.end()) return std::nullopt;
  GgufArch a;
  a.name = it->name;
  a.rope = it->rope;
  return rules(a);
}

bool gguf_layer_slides(const GgufArch& a, std::int64_t il) {
  return a.swa != Window::Kind::full && a.pattern != 1 && (a.pattern == 0 || il % a.pattern < a.pattern - 1);
}

}  // namespace ropekit
