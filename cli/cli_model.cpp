// ropekit model FILE: a model file (HuggingFace config.json) as ropekit reads it, one row per layer type: how many
// layers, the encoding as a spelling every command accepts, head and rotated dims, the window, the rotary
// attention factor, the softmax multiplier and notes on how frameworks read the file (lib/ropekit/models/).
#include <algorithm>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "reports/output.hpp"
#include "reports/table.hpp"
#include "ropekit/models/model.hpp"

namespace ropekit {

namespace {

struct ModelArgs {
  std::string file, format = "csv", out;
};

void run_model(const ModelArgs& a) {
  const std::string command = "ropekit model";
  const Format format = parse_format_option(command, a.format);
  check_output_path(a.out);
  Model m;
  try {
    m = read_model(a.file);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", command, e.what()));
  }
  Table t;
  t.columns = {"layer_type", "layers",           "encoding",      "head_dim", "rotary_dims",
               "pairing",    "window", "attention_factor", "softmax_scale", "notes"};
  for (const auto& l : m.layer_types) {
    const std::string notes = layer_notes(m, l);
    t.add_row({l.name, l.layers ? Cell(static_cast<std::int64_t>(l.layers)) : Cell(), spelling(l.encoding),
               static_cast<std::int64_t>(l.head_dim), static_cast<std::int64_t>(l.rotary_dims),
               std::string(pairing_name(l.pairing)), window_text(l.window),
               l.attention_factor, l.softmax_scale, notes});
  }
  emit(a.out, render(t, format));
}

}  // namespace

CLI::Option* add_model_option(CLI::App* c, std::vector<std::string>& models, bool several) {
  return c->add_option("--model", models,
                       several ? "a model file (config.json or GGUF) instead of --encoding: FILE:LAYER_TYPE for one layer "
                                 "type, FILE for every layer type (see `ropekit model FILE`)"
                               : "a model file (config.json or GGUF) instead of --encoding: FILE, or FILE:LAYER_TYPE when "
                                 "its layer types differ (see `ropekit model FILE`)");
}

std::vector<ModelLayer> model_layers(const std::string& command, const std::vector<std::string>& models,
                                     bool several) {
  return model_layers(models, several, Where::options(command));
}

std::vector<std::string> model_encodings(const std::string& command, const std::vector<std::string>& models,
                                         bool several) {
  return model_encodings(models, several, Where::options(command));
}

std::optional<ModelLayer> take_model_encoding(const std::string& command, const std::vector<std::string>& models,
                                              std::string& encoding) {
  if (models.empty()) return std::nullopt;
  std::vector<ModelReference> refs;
  for (const auto& text : models) refs.push_back(split_model_reference(text));
  ModelLayer layer = one_model_layer(refs, Where::options(command));
  encoding = layer.encoding;
  return layer;
}

void add_model_command(CLI::App& app, const CliContext&) {
  auto a = std::make_shared<ModelArgs>();
  auto* c = app.add_subcommand("model", "Read a model file (HuggingFace config.json, transformers 4 or 5 keys, or GGUF): one row "
                                        "per layer type with its encoding as a spelling every command accepts");
  c->add_option("file", a->file, "the model's config.json or .gguf file")->required();
  c->add_option("--format", a->format, "csv, md, json or latex")->capture_default_str();
  c->add_option("--out", a->out, "output file (default: stdout); written only if the run succeeds");
  c->callback([a] { run_model(*a); });
}

}  // namespace ropekit
