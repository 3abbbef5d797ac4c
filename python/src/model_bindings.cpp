// ropekit.model: a model file's layer types (as `ropekit model FILE`), columns named as the command's CSV.
#include "bindings.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ropekit/commands/frameworks_request.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/models/model.hpp"
#include "ropekit/models/model_layers.hpp"

namespace ropekit::bindings {

py::dict py_model(const std::string& path) {
  Model m;
  try {
    m = read_model(path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("ropekit model: {}", e.what()));
  }
  std::vector<std::string> name, encoding, pairing, window, notes;
  std::vector<std::int64_t> layers, head_dim, rotary_dims;
  std::vector<double> attention_factor, softmax_scale, floor_scale, attn_scale;
  for (const auto& l : m.layer_types) {
    name.push_back(l.name);
    layers.push_back(l.layers);
    encoding.push_back(spelling(l.encoding));
    head_dim.push_back(l.head_dim);
    rotary_dims.push_back(l.rotary_dims);
    pairing.emplace_back(pairing_name(l.pairing));
    window.push_back(window_text(l.window));
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
  d["pairing"] = pairing;
  d["window"] = window;
  d["attention_factor"] = column(attention_factor);
  d["softmax_scale"] = column(softmax_scale);
  // Llama 4's query temperature s(p) = attn_scale ln(1 + floor((p + 1) / floor_scale)) + 1 (NaN: none).
  d["query_floor_scale"] = column(floor_scale);
  d["query_attn_scale"] = column(attn_scale);
  d["notes"] = notes;
  return d;
}

py::dict py_frameworks(const py::object& path, const py::object& layer_type) {
  const std::string command = "ropekit frameworks";
  std::string file, type;
  try {
    file = py::str(py::module_::import("os").attr("fspath")(path)).cast<std::string>();
  } catch (const py::error_already_set&) {
    bad(command, "file", short_repr(path), "a model file's path (str or os.PathLike)");
  }
  if (!layer_type.is_none()) {
    if (!py::isinstance<py::str>(layer_type)) bad(command, "--layer-type", short_repr(layer_type), "a str");
    type = layer_type.cast<std::string>();
  }
  const auto rows = framework_rows(file, type, Where::options(command));
  std::vector<std::string> name, framework, version, encoding, pairing, notes;
  std::vector<std::int64_t> rotary_dims, denominator;
  std::vector<double> cos_sin, softmax, logit, freq_diff, kernel_diff;
  for (const FrameworkRow& r : rows) {
    name.push_back(r.layer_type);
    framework.push_back(framework_name(r.reading.framework));
    version.push_back(r.reading.version);
    encoding.push_back(spelling(r.reading.encoding));
    pairing.emplace_back(pairing_name(r.reading.pairing));
    rotary_dims.push_back(r.rotary_dims);
    denominator.push_back(r.reading.freq_denominator);
    cos_sin.push_back(r.reading.cos_sin_factor);
    softmax.push_back(r.reading.softmax_scale);
    logit.push_back(r.logit_scale);
    freq_diff.push_back(r.max_rel_freq_diff);
    kernel_diff.push_back(r.kernel_max_diff);
    notes.push_back(r.notes);
  }
  py::dict d;
  d["layer_type"] = name;
  d["framework"] = framework;
  d["version"] = version;
  d["encoding"] = encoding;
  d["pairing"] = pairing;
  d["rotary_dims"] = int_column(rotary_dims);
  d["freq_denominator"] = int_column(denominator);  // 0: a layer without RoPE (the CLI's empty cell)
  d["cos_sin_factor"] = column(cos_sin);
  d["softmax_scale"] = column(softmax);
  d["logit_scale"] = column(logit);
  d["max_rel_freq_diff"] = column(freq_diff);
  d["kernel_max_diff"] = column(kernel_diff);
  d["notes"] = notes;
  return d;
}

}  // namespace ropekit::bindings

namespace ropekit::bindings {

std::vector<ModelLayer> bound_model_layers(const std::string& command, const std::string& encoding_option,
                                           const py::object& encoding, const py::object& model,
                                           const py::object& layer_type, bool several) {
  if (model.is_none()) bad(command, "--layer-type", short_repr(layer_type), "given with model only");
  if (!encoding.is_none())
    bad(command, encoding_option, short_repr(encoding), "absent with model (give one of them)");
  ModelReference ref;
  try {
    ref.path = py::str(py::module_::import("os").attr("fspath")(model)).cast<std::string>();
  } catch (const py::error_already_set&) {
    bad(command, "--model", short_repr(model), "a model file's path (str or os.PathLike)");
  }
  if (!layer_type.is_none()) {
    if (!py::isinstance<py::str>(layer_type)) bad(command, "--layer-type", short_repr(layer_type), "a str");
    ref.layer_type = layer_type.cast<std::string>();
    if (ref.layer_type.empty()) bad(command, "--layer-type", "''", "a layer type's name (ropekit.model(path))");
  }
  return model_layers({ref}, several, Where::options(command));
}

std::optional<ModelLayer> bound_model_layer(const std::string& command, const std::string& encoding_option,
                                            const py::object& encoding, const py::object& model,
                                            const py::object& layer_type) {
  if (model.is_none() && layer_type.is_none()) return std::nullopt;
  const auto layers = bound_model_layers(command, encoding_option, encoding, model, layer_type, false);
  return layers.front();
}

py::dict with_layer_type(const py::dict& d, const std::string& label) {
  py::ssize_t rows = 0;
  for (const auto& item : d) {
    rows = py::len(item.second);
    break;
  }
  py::dict out;
  out["layer_type"] = py::list(py::cast(std::vector<std::string>(static_cast<std::size_t>(rows), label)));
  for (const auto& item : d) out[item.first] = item.second;
  return out;
}

}  // namespace ropekit::bindings
