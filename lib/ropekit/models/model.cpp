#include "ropekit/models/model.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "ropekit/core/input_file.hpp"
#include "ropekit/models/gguf.hpp"
#include "ropekit/models/hf_config.hpp"

namespace ropekit {

Model read_model(const std::string& path) {
  // GGUF by its magic, read without the weights; anything else must be a config.json.
  {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    std::error_code ec;
    if (in && std::filesystem::is_regular_file(path, ec) && in.read(magic, 4) && std::string_view(magic, 4) == "GGUF")
      return model_from_gguf(read_gguf(path), path);
  }
  const std::string text = read_file(path, "model file", kMaxConfigJsonBytes);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return read_hf_config(text, path);
  throw InputError(fmt::format("{}: not a model file (a HuggingFace config.json is a JSON object; a GGUF file starts with 'GGUF')", path));
}

namespace {

std::string type_names(const Model& m) {
  std::string out;
  for (const auto& l : m.layer_types) out += (out.empty() ? "" : ", ") + l.name;
  return out;
}

}  // namespace

const LayerType& find_layer_type(const Model& m, std::string_view name, const Where& where) {
  if (name.empty()) {
    const bool one = std::all_of(m.layer_types.begin(), m.layer_types.end(),
                                 [&](const auto& l) { return l.encoding == m.layer_types.front().encoding; });
    if (!m.layer_types.empty() && one) return m.layer_types.front();
    throw InputError(fmt::format("{}: model '{}' has layer types with different encodings ({}): name one as "
                                 "{}:<layer type>",
                                 where.context, m.source, type_names(m), m.source));
  }
  for (const auto& l : m.layer_types)
    if (l.name == name) return l;
  throw_bad_value(where, "layer type", fmt::format("'{}'", name), fmt::format("one of {}", type_names(m)));
}

ModelReference split_model_reference(std::string_view text) {
  const std::string whole(text);
  std::error_code ec;
  const auto colon = whole.rfind(':');
  if (colon == std::string::npos || std::filesystem::exists(whole, ec)) return {whole, ""};
  return {whole.substr(0, colon), whole.substr(colon + 1)};
}

}  // namespace ropekit
