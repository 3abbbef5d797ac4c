#include "ropekit/models/model_layers.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

namespace ropekit {

std::string model_file_name(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string name = p.filename().string(), parent = p.parent_path().filename().string();
  return name == "config.json" && !parent.empty() ? parent + "/" + name : name;
}

std::vector<ModelLayer> model_layers(const std::vector<ModelReference>& models, bool several, const Where& where) {
  std::vector<ModelLayer> out;
  std::vector<std::string> paths;
  for (const auto& ref : models)
    if (std::find(paths.begin(), paths.end(), ref.path) == paths.end()) paths.push_back(ref.path);
  for (const auto& ref : models) {
    Model m;
    try {
      m = read_model(ref.path);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}: {}", where.context, where.name("model"), e.what()));
    }
    auto add = [&](const LayerType& l) {
      const std::string label = paths.size() > 1 ? ref.path + ":" + l.name : l.name;
      auto same_temperature = [&](const ModelLayer& o) {
        return o.temperature.has_value() == l.temperature.has_value() &&
               (!l.temperature || (o.temperature->floor_scale == l.temperature->floor_scale &&
                                   o.temperature->attn_scale == l.temperature->attn_scale));
      };
      const std::string spelled = spelling(l.encoding);
      const auto same = std::find_if(out.begin(), out.end(), [&](const ModelLayer& o) {
        return o.encoding == spelled && o.window_value == l.window && same_temperature(o);
      });
      const std::string brief = model_file_name(ref.path) + (l.name.empty() ? "" : ": " + l.name);
      if (same == out.end()) {
        out.push_back({spelled, window_text(l.window), label, window_span(l), l.temperature, brief, l.name, l.encoding,
                       l.window, m.format, m.model_type});
      } else if ((", " + same->label + ", ").find(", " + label + ", ") == std::string::npos) {
        same->label += ", " + label, same->brief += ", " + brief;
        if ((", " + same->layer_type + ", ").find(", " + l.name + ", ") == std::string::npos)
          same->layer_type += ", " + l.name;
      }
    };
    if (!ref.layer_type.empty() || !several) {
      add(find_layer_type(m, ref.layer_type, where));
    } else {
      for (const auto& l : m.layer_types) add(l);
    }
  }
  return out;
}

std::vector<ModelLayer> model_layers(const std::vector<std::string>& models, bool several, const Where& where) {
  std::vector<ModelReference> refs;
  for (const auto& text : models) refs.push_back(split_model_reference(text));
  return model_layers(refs, several, where);
}

std::vector<std::string> model_encodings(const std::vector<std::string>& models, bool several, const Where& where) {
  std::vector<std::string> out;
  for (const auto& l : model_layers(models, several, where))
    if (std::find(out.begin(), out.end(), l.encoding) == out.end()) out.push_back(l.encoding);
  return out;
}

ModelLayer one_model_layer(const std::vector<ModelReference>& models, const Where& where) {
  const auto layers = model_layers(models, false, where);
  std::vector<std::string> encodings;
  for (const auto& l : layers)
    if (std::find(encodings.begin(), encodings.end(), l.encoding) == encodings.end()) encodings.push_back(l.encoding);
  if (encodings.size() != 1)
    throw_bad_value(where, "model", fmt::format("{} encodings", encodings.size()),
                    "one model layer type (give --model once)");
  return layers.front();
}

}  // namespace ropekit
