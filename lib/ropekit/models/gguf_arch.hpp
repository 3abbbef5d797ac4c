#pragma once
// llama.cpp's per-architecture rules for a GGUF's attention layers, as its loader applies them (src/llama-model.cpp
// llama_model::load_hparams and llama_model_rope_type, src/llama-hparams.cpp set_swa_pattern, the graph builders in
// src/models/, read at llama.cpp's master of 2026): which layers slide or are chunked, which skip RoPE, the base and
// scale of the sliding layers, the pairing (rope type NORM or NEOX) and the logit scale. The GGUF reader (gguf.cpp)
// reads the keys; this table says what llama.cpp does with them per architecture.

#include <cstdint>
#include <optional>
#include <string_view>

#include "ropekit/models/model.hpp"

namespace ropekit {

/// llama_model_rope_type: NORM rotates adjacent dims (2i, 2i + 1), NEOX dims i and i + n_rot/2, MROPE is NEOX with
/// sections (Qwen2-VL), NONE applies no rotary embedding; unlisted: an architecture llama.cpp knows whose rope type
/// ropekit has no record of.
enum class GgmlRopeType { norm, neox, mrope, none, unlisted };

/// What llama.cpp's loader and graph do for one architecture beyond the general keys.
struct GgufArch {
  std::string_view name;  ///< general.architecture
  GgmlRopeType rope = GgmlRopeType::unlisted;
  /// Sliding layers: set_swa_pattern(pattern): layer il slides iff il % pattern < pattern - 1 (1: none slides).
  Window::Kind swa = Window::Kind::full;
  int pattern = 1;
  /// attention.sliding_window: required (llama.cpp throws "key not found") or its default when absent (gemma2: 4096).
  bool window_required = false;
  std::int64_t window_default = 0;
  /// Sliding layers at base 10000, unscaled, whatever rope.freq_base and the scaling say (gemma3's hard-coded
  /// rope_freq_base_train_swa / rope_freq_scale_train_swa); else the global base and scale.
  bool swa_rope_fixed = false;
  bool swa_base_key = false;     ///< rope.freq_base_swa and attention.sliding_window_pattern read (gpt-oss)
  int nope_step = 0;             ///< layers with (il + 1) % step == 0 skip RoPE (llama4, smollm3)
  bool full_layers_nope = false;  ///< the non-sliding layers skip RoPE (cohere2)
  bool rot_is_head = false;      ///< "invalid n_rot" unless rope.dimension_count is the head size (llama, deci, falcon)
  bool gemma_query_scale = false;  ///< Q scaled by f_attention_scale (27B: 1/sqrt(n_embd/n_head)), kq_scale 1
  bool kq_scale_n_rot = false;   ///< kq_scale = 1/sqrt(n_rot) (gpt-oss)
  bool yarn_log_multiplier = false;  ///< rope.scaling.yarn_log_multiplier read (DeepSeek-V2/V3 and their kin)
  bool yarn_betas = false;       ///< rope.scaling.yarn_beta_fast / _slow read (grok, beta_fast default 8)
  bool phi3_swa_disabled = false;  ///< attention.sliding_window read and switched off (Phi-3, llama.cpp PR 13676)
  bool llama4_chunks = false;    ///< chunked 8192 unless attention.sliding_window = 0; NoPE layers get a temperature
  int layers_27b = 0;            ///< block_count of the 27B model (gemma2 46, gemma3 62): its other query scale
};

/// The rules for `arch`; none when llama.cpp knows no such architecture (its loader throws "unknown model
/// architecture"). An architecture llama.cpp knows without rules here reads only the general keys.
std::optional<GgufArch> gguf_arch(std::string_view arch);

/// Whether layer il (0-based) of a model with this architecture slides (set_swa_pattern(pattern), dense last).
bool gguf_layer_slides(const GgufArch& a, std::int64_t il);

}  // namespace ropekit
