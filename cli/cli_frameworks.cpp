// ropekit frameworks FILE[:LAYER_TYPE]: one row per layer type and framework (transformers 5 and 4, vLLM, sglang,
// llama.cpp, mlx-lm), each framework's reading of the config.json and its difference from transformers 5
// (lib/ropekit/commands/frameworks_request.hpp, lib/ropekit/frameworks/).
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "reports/output.hpp"
#include "reports/table.hpp"
#include "ropekit/commands/frameworks_request.hpp"
#include "ropekit/models/model.hpp"

namespace ropekit {

namespace {

struct FrameworksArgs {
  std::string file, format = "csv", out;
};

void run_frameworks(const FrameworksArgs& a) {
  const std::string command = "ropekit frameworks";
  const Format format = parse_format_option(command, a.format);
  check_output_path(a.out);
  const ModelReference ref = split_model_reference(a.file);
  const auto rows = framework_rows(ref.path, ref.layer_type, Where::options(command));
  Table t;
  t.columns = framework_columns();
  for (const FrameworkRow& r : rows) {
    const FrameworkReading& f = r.reading;
    const auto optional_int = [](int v) { return v ? Cell(static_cast<std::int64_t>(v)) : Cell(); };
    t.add_row({r.layer_type, framework_name(f.framework), f.version, spelling(f.encoding),
               std::string(pairing_name(f.pairing)), static_cast<std::int64_t>(r.rotary_dims),
               optional_int(f.freq_denominator), f.cos_sin_factor, f.softmax_scale, r.logit_scale, r.max_rel_freq_diff,
               r.kernel_max_diff, r.notes});
  }
  emit(a.out, render(t, format));
}

}  // namespace

void add_frameworks_command(CLI::App& app, const CliContext&) {
  auto a = std::make_shared<FrameworksArgs>();
  auto* c = app.add_subcommand("frameworks", "How transformers 5 and 4, vLLM, sglang, llama.cpp and mlx-lm run a "
                                             "config.json's positional encoding: one row per layer type and framework, "
                                             "with the difference from transformers 5");
  c->add_option("file", a->file, "the model's config.json, or FILE:LAYER_TYPE for one layer type")->required();
  c->add_option("--format", a->format, "csv, md, json or latex")->capture_default_str();
  c->add_option("--out", a->out, "output file (default: stdout); written only if the run succeeds");
  c->callback([a] { run_frameworks(*a); });
}

}  // namespace ropekit
