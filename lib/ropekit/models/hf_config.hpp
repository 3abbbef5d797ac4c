#pragma once
// HuggingFace config.json as transformers 5.17 reads it (modeling_rope_utils.py RotaryEmbeddingConfigMixin and the
// model configs' own conversions), in both styles:
//   transformers 4: rope_theta, rope_scaling {rope_type | legacy type, factor, ...}, top-level partial_rotary_factor,
//                   GPT-NeoX rotary_pct / rotary_emb_base, GPT-J rotary_dim, Gemma 3 rope_local_base_freq and
//                   sliding_window_pattern;
//   transformers 5: rope_parameters {rope_type, rope_theta, ...}, flat or keyed by layer type, with layer_types.
// Composite models are read from their text_config. Head size: head_dim, else hidden_size / num_attention_heads;
// DeepSeek's qk_rope_head_dim rotated + qk_nope_head_dim unrotated dims. Layer structure: sliding_window,
// attention_chunk_size, no_rope_layers (Llama 4, SmolLM3), attn_temperature_tuning / floor_scale / attn_scale.

#include <string>
#include <string_view>

#include "ropekit/models/model.hpp"

namespace ropekit {

/// Largest config.json read (real ones are under 100 KB; a LongRoPE config with two factor lists is ~10 KB).
inline constexpr std::uint64_t kMaxConfigJsonBytes = std::uint64_t{16} << 20;

/// Python's json module writes Infinity, -Infinity and NaN (a config's `time_step_limit: [0.0, Infinity]`), which
/// strict JSON lacks: outside strings they become the strings "Infinity", "-Infinity", "NaN", so that the file
/// parses and a key holding one is refused by its type check naming the value. Also refuses nesting deeper than
/// 64 levels (before any parser recurses into it).
std::string python_json_to_strict(std::string_view text, const std::string& source);

/// The model a config.json's text describes; `source` names it in messages.
/// @throws InputError "<source>: <key> = <value> (must be <constraint>)" for a malformed or unsupported file.
Model read_hf_config(std::string_view text, const std::string& source);

}  // namespace ropekit
