#pragma once
// A model file as ropekit reads it: a list of layer types, each an encoding every command accepts, with the layer
// structure around it (how many layers, head and rotated dims, the attention window, the rotary attention factor,
// a softmax multiplier) and notes on how frameworks read the file. Readers: hf_config.hpp (HuggingFace
// config.json, transformers 4 and 5 styles). Data flows one way: file -> Model -> encodings -> every command.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit {

/// Llama 4's query temperature on NoPE layers (attn_temperature_tuning): the query at position p is multiplied by
/// s(p) = attn_scale ln(1 + floor((p + 1) / floor_scale)) + 1, so the score depends on p, not only on the lag.
struct QueryTemperature {
  double floor_scale = 8192, attn_scale = 0.1;
};
/// s(p) above (transformers' Llama4TextAttention, in float64).
double query_scale(const QueryTemperature& t, double position);

/// The positions a query of a layer sees: every earlier one (full), the W - 1 before it and itself (sliding W:
/// lags < W), or its own chunk of C positions (chunked C: no lag >= C). span is W or C (>= 1), 0 for full.
struct Window {
  enum class Kind { full, sliding, chunked };
  Kind kind = Kind::full;
  std::int64_t span = 0;
  bool operator==(const Window&) const = default;
};
/// "" (full), "sliding W", "chunked C": the `window` column of `ropekit model` and the text of messages.
std::string window_text(const Window& w);

/// How a head's rotated dims are paired: half (transformers' rotate_half, llama.cpp's NEOX: dims i and i + r/2) or
/// adjacent (GPT-J's rotate_every_two, llama.cpp's NORMAL, Llama 4's complex view: dims 2i and 2i + 1). The kernel
/// of isotropic content is the same either way; weights and framework ports are not.
enum class Pairing { half, adjacent };
/// "half", "adjacent": the `pairing` column of `ropekit model`.
std::string_view pairing_name(Pairing p);

/// One layer type of a model: every layer of this type has the same positional encoding and window.
struct LayerType {
  /// The config's name ("full_attention", "sliding_attention", "chunked_attention"); "<type>/nope" for the NoPE layers
  /// of a type that has rotary layers too (SmolLM3); "full_attention/head_<h>" for head h of an ALiBi model.
  std::string name;
  int layers = 0;               ///< layers of this type (0 when the file gives no layer count)
  Encoding encoding{enc::Nope{}};  ///< the value the reader built; spelling(encoding) prints it ("nope:dim=<head_dim>")
  int head_dim = 0;             ///< dims of q.k in one head
  int rotary_dims = 0;          ///< of which rotated (2 x the number of non-zero frequencies)
  Pairing pairing = Pairing::half;  ///< which dims a rotation pairs, as the framework the file is for applies it
  Window window;                ///< the lags a query sees (window_text prints it)
  double attention_factor = 1;  ///< a: cos and sin are scaled by a, the score by a^2 (YaRN mscale, LongRoPE)
  /// Multiplier of the logits beyond 1/sqrt(head_dim): DeepSeek's mscale^2, Gemma's sqrt(head_dim /
  /// query_pre_attn_scalar), MPT's softmax_scale x sqrt(head_dim).
  double softmax_scale = 1;
  std::optional<QueryTemperature> temperature;  ///< Llama 4 NoPE layers
  std::vector<std::string> notes;  ///< how frameworks read it, keys read but unused, defaults assumed
  /// A config.json's rope parameters for this layer type as the file gives them (transformers' standardized dict:
  /// numbers and booleans, booleans as 0 / 1) and its rope_type: what other frameworks read their own way
  /// (frameworks/). Empty for a GGUF and for layers without RoPE.
  std::map<std::string, double> rope_keys;
  std::string rope_type;
};

/// The smallest lag |Dp| a layer of this type cannot see: W of "sliding W" (a query sees the W - 1 keys before it
/// and itself), C of "chunked C" (a query sees its own chunk of C positions, so no lag >= C); none for full.
std::optional<std::int64_t> window_span(const Window& w);
std::optional<std::int64_t> window_span(const LayerType& l);

/// A model: its layer types in order of first appearance, and notes about the file as a whole.
struct Model {
  std::string source;      ///< the path read
  std::string format;      ///< "config.json (transformers 4 keys)", "config.json (transformers 5 keys)"
  std::string model_type;  ///< the file's model_type ("" when absent)
  std::optional<std::int64_t> context_length;  ///< max_position_embeddings
  std::vector<LayerType> layer_types;
  std::vector<std::string> notes;
};

/// A layer type's notes and then the file's, joined by "; " (the `notes` column of `ropekit model`).
std::string layer_notes(const Model& m, const LayerType& l);

/// Reads a model file, choosing the reader by content (GGUF by its magic, else a JSON object: config.json).
/// @throws InputError "<path>: ..." naming the key and value for a malformed file; "model file = '<path>' (must be
/// a regular file, not a FIFO (named pipe))" and the like, before opening it, for anything but a regular file.
Model read_model(const std::string& path);

/// The layer type `name` of the model; an empty name when the model has one layer type (or all share one encoding).
/// @throws InputError naming the model's layer types when the name is unknown or one is needed.
const LayerType& find_layer_type(const Model& m, std::string_view name, const Where& where);

/// "FILE" or "FILE:LAYER_TYPE" (the layer type is what follows the last ':' when it names one of the model's types).
struct ModelReference {
  std::string path;
  std::string layer_type;
};
ModelReference split_model_reference(std::string_view text);

}  // namespace ropekit
