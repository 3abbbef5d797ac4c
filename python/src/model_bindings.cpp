// ropekit.model: a model file's layer types (as `ropekit model FILE`), columns named as the command's CSV.
#include "bindings.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/models/model.hpp"

namespace ropekit::bindings {

py::dict py_model(const std::string& path) {
  Model m;
  try {
    m = read_model(path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("ropekit model: {}", e.what()));
  }
  std::vector<std::string> name, encoding, window, notes;
  std::vector<std::int64_t> layers, head_dim, rotary_dims;
  std::vector<double> attention_factor, softmax_scale, floor_scale, attn_scale;
  for (const auto& l : m.layer_types) {
    name.push_back(l.name);
    layers.push_back(l.layers);
    encoding.push_back(l.encoding);
    head_dim.push_back(l.head_dim);
    rotary_dims.push_back(l.rotary_dims);
    window.push_back(l.window);
    attention_factor.push_back(l.attention_factor);
    softmax_scale.push_back(l.softmax_scale);
    floor_scale.push_back(l.temperature ? l.temperature->floor_scale : std::nan(""));
    attn_scale.push_back(l.temperature ? l.temperature->attn_scale : std::nan(""));
    notes.push_back(layer_notes(m, l));
  }
  py::dict d;
  d["layer_type"] = name;
  d["layers"] = int_column(layers);
  d["encoding"] = encoding;
  d["head_dim"] = int_column(head_dim);
  d["rotary_dims"] = int_column(rotary_dims);
  d["window"] = window;
  d["attention_factor"] = column(attention_factor);
  d["softmax_scale"] = column(softmax_scale);
  // Llama 4's query temperature s(p) = attn_scale ln(1 + floor((p + 1) / floor_scale)) + 1 (NaN: none).
  d["query_floor_scale"] = column(floor_scale);
  d["query_attn_scale"] = column(attn_scale);
  d["notes"] = notes;
  return d;
}

}  // namespace ropekit::bindings
