#pragma once
// A model's layer types taken into a request (`--model FILE[:LAYER_TYPE]`, Python's model= and layer_type=): each
// layer type's encoding spelling with what the request must apply around it, the window (lags it never sees) and
// Llama 4's query temperature, and a label for its rows (the `layer_type` column). The command line and the Python
// module bind their options to these; the requests (commands/kernel_request.hpp, commands/fit_layers.hpp) apply them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/models/model.hpp"

namespace ropekit {

/// A model's layer type taken into a request: its encoding (value and spelling), the smallest lag its window hides
/// (span: none when it sees every earlier position) and a label for its rows: the layer type's name
/// (FILE:LAYER_TYPE when several files are named; names joined by ", " when types share encoding and window).
struct ModelLayer {
  std::string encoding, window, label;
  std::optional<std::int64_t> span;
  std::optional<QueryTemperature> temperature;  ///< Llama 4's NoPE layers: the score is scaled by s(p)
  std::string brief;  ///< "<model_file_name>: <layer type>[, ...]": a figure's legend label (label names full paths)
  std::string layer_type;  ///< the layer types' names as the file gives them, joined by ", " (no file paths)
  /// The encoding the reader built (`encoding` is its spelling); none in ModelLayer{}, an encoding given as such.
  std::optional<Encoding> value;
  Window window_value;  ///< the window as a value (`window` is its text)
  std::string model_format;  ///< the file's Model::format ("GGUF v3", "config.json (...)"); "" for an encoding
  std::string model_type;    ///< the file's Model::model_type (config.json; "" when absent)
};

/// A model file as a legend names it: its base name, with its directory's for a config.json ("Llama-3.1-8B/config.json").
std::string model_file_name(const std::string& path);

/// The models' layer types, each (encoding, window, temperature) once. several: FILE alone gives every layer type;
/// else FILE needs a LAYER_TYPE when its layer types' encodings differ (the message lists them).
/// @throws InputError "<where.context>: <--model>: <the reader's message>" for a file that does not read, naming the
///         model's layer types for an unknown one.
std::vector<ModelLayer> model_layers(const std::vector<ModelReference>& models, bool several, const Where& where);
/// The same for references as typed ("FILE" or "FILE:LAYER_TYPE", split_model_reference).
std::vector<ModelLayer> model_layers(const std::vector<std::string>& models, bool several, const Where& where);

/// The spellings of the models' layer types (duplicates once), for requests that do not look at windows.
std::vector<std::string> model_encodings(const std::vector<std::string>& models, bool several, const Where& where);

/// For a request that takes one encoding: the layer type the models name.
/// @throws InputError naming `model` when they name several encodings.
ModelLayer one_model_layer(const std::vector<ModelReference>& models, const Where& where);

}  // namespace ropekit
