// Built-in probe `models`: the config.json of 14 public checkpoints (data/models/, compiled in), each layer type's
// encoding as ropekit reads it (lib/ropekit/models/), and per layer type the numbers of models/model_report.hpp
// (kernel over the visible lags, wavelength coverage, Men et al.'s base bound, framework notes), the tables of
// reports/model_tables.hpp; `ropekit report` computes the same for the user's files.
#include "probes/models_probe.hpp"

#include <chrono>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "reports/model_tables.hpp"
#include "reports/output.hpp"
#include "reports/plot.hpp"
#include "reports/table.hpp"
#include "ropekit/core/embedded.hpp"
#include "ropekit/models/hf_config.hpp"
#include "ropekit/commands/model_report.hpp"

namespace ropekit {

namespace {

struct PublicModel {
  std::string name, family, file;
};

// The committed configs (data/models/README.md says where each comes from).
const std::vector<PublicModel>& public_models() {
  static const std::vector<PublicModel> m = {
      {"Llama 2 7B", "llama", "data/models/llama-2-7b.json"},
      {"Llama 3.1 8B", "llama", "data/models/llama-3.1-8b.json"},
      {"Llama 3.2 1B", "llama", "data/models/llama-3.2-1b.json"},
      {"Llama 4 Scout", "llama", "data/models/llama-4-scout.json"},
      {"Mistral 7B v0.1", "mistral", "data/models/mistral-7b-v0.1.json"},
      {"Qwen2.5 7B + YaRN x4", "qwen", "data/models/qwen2.5-7b-yarn.json"},
      {"Qwen2-VL 7B", "qwen", "data/models/qwen2-vl-7b.json"},
      {"DeepSeek-V3", "deepseek", "data/models/deepseek-v3.json"},
      {"Gemma 3 4B", "gemma", "data/models/gemma-3-4b.json"},
      {"Gemma 4", "gemma", "data/models/gemma-4.json"},
      {"gpt-oss 20B", "gpt-oss", "data/models/gpt-oss-20b.json"},
      {"Phi-3 vision 128k", "phi-3", "data/models/phi-3-vision-128k.json"},
      {"SmolLM3 3B", "smollm3", "data/models/smollm3-3b.json"},
      {"Pythia 1.4B", "pythia", "data/models/pythia-1.4b.json"},
  };
  return m;
}

}  // namespace

ProbeResult run_models_probe(const ProbeContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::filesystem::path dir(ctx.out_dir);
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;

  Table summary = model_summary_table(), kernels = model_kernels_table(), data;
  data.columns = {"model", "layer_type", "encoding", "lag", "kernel"};
  std::map<std::string, std::vector<PlotSeries>> plots;
  std::vector<std::string> family_order;
  std::string notes_md;
  int negative = 0, below_bound = 0, layer_count = 0, rotary_count = 0;

  for (const auto& pm : public_models()) {
    const Model m = read_hf_config(std::string(embedded_file(pm.file)), pm.file);
    if (std::find(family_order.begin(), family_order.end(), pm.family) == family_order.end())
      family_order.push_back(pm.family);
    const ModelReport report = model_report(m);
    std::string model_notes;
    for (const auto& r : report.layers) {
      ++layer_count;
      rotary_count += r.rotary;
      if (r.rotary) {
        negative += r.first_negative_lag.has_value();
        below_bound += r.base_bound && r.base && *r.base < *r.base_bound;
        PlotSeries line;
        line.label = m.layer_types.size() > 1 ? fmt::format("{} {}", pm.name, r.layer.name) : pm.name;
        line.x = r.plot_lags;
        line.y = r.plot_kernel;
        plots[pm.family].push_back(line);
        for (std::size_t i = 0; i < r.plot_lags.size(); ++i)
          data.add_row({pm.name, r.layer.name, spelling(r.layer.encoding), r.plot_lags[i], r.plot_kernel[i]});
      }
      add_summary_row(summary, pm.name, r);
      add_kernels_row(kernels, pm.name, r);
      for (const auto& n : r.notes) model_notes += fmt::format("- {}: {}\n", r.layer.name, n);
    }
    for (const auto& n : report.notes) model_notes += fmt::format("- (file): {}\n", n);
    if (!model_notes.empty()) notes_md += fmt::format("\n**{}** (`{}`)\n\n{}", pm.name, pm.file, model_notes);
  }

  for (const auto& family : family_order) {
    if (!plots.count(family)) continue;
    PlotOptions po;
    po.title = fmt::format("Kernels of {} layer types over the lags each can see", family);
    po.xlabel = "lag Dp";
    po.ylabel = "Phi(Dp) = tr G / tr G(0)";
    po.log_x = true;
    const std::string svg = (dir / fmt::format("models-{}.svg", family)).string();
    write_file_atomic(svg, svg_line_plot(plots[family], po));
    files.push_back(svg);
  }

  std::string md = report_header(
      "Models: the positional encodings of public checkpoints, layer type by layer type", ctx.command,
      fmt::format("- {} models, {} layer types; configs compiled in from `data/models/` (the keys that bear on "
                  "positional encoding, from each model's published config.json; see data/models/README.md)\n",
                  public_models().size(), layer_count));
  md += "\n## 1. Summary\n\n"
        "Per layer type: the encoding as `ropekit model` reads it; `context` is max_position_embeddings (or orig x factor "
        "where a scheme stretches past it); `visible_lags` is the largest lag the layer sees (its sliding window W - 1 or "
        "chunk C - 1, else the context - 1). `pairs` rotating pairs, of which `turns_within_orig` complete a turn (wavelength "
        "2 pi / theta <= L0, the scheme's original context, else the context) and `turns_within_context` within the "
        "extended context. `min_kernel` is the minimum of Phi over every visible lag (at `min_kernel_lag`), "
        "`first_negative_lag` the first lag where Phi < 0. `men_base_bound` (Men et al. 2024, \"Base of RoPE Bounds "
        "Context Length\"): the smallest base, on a grid of 16 per decade from 10, for which the layer's kernel (its "
        "scheme, partial rotation and identity pairs kept, only the base changed) stays >= 0 on every visible lag; "
        "scanned upward, not bisected, because the criterion is not monotone in the base.\n\n";
  md += to_markdown(summary);
  md += fmt::format("\n{} of the {} rotary layer types have a negative kernel somewhere within the lags they see; {} "
                    "use a base below Men et al.'s bound for those lags.\n",
                    negative, rotary_count, below_bound);
  md += "\n## 2. Kernels at selected lags\n\n"
        "Phi(Dp) for isotropic content (blank: the layer cannot see that lag, or it is past the context). NoPE layers: "
        "Phi = 1 (Llama 4's are scaled by its query temperature, below). Plots, one per model family: ";
  for (std::size_t i = 0; i < family_order.size(); ++i)
    md += fmt::format("{}`models-{}.svg`", i ? ", " : "", family_order[i]);
  md += ".\n\n" + to_markdown(kernels);
  md += "\n## 3. How frameworks read these files\n\nThe reader's notes per layer type (keys read differently by "
        "transformers, vLLM and llama.cpp, defaults assumed, keys not read), with llama.cpp's YaRN reading computed "
        "(ggml's ramp and truncated correction dims against transformers').\n" +
        notes_md;
  md += "\nData: `models-summary.csv` (full precision), `models-kernels.csv` (every plotted kernel value).\n";

  const std::string report = (dir / "models.md").string(), summary_csv = (dir / "models-summary.csv").string(),
                    kernels_csv = (dir / "models-kernels.csv").string();
  write_file_atomic(summary_csv, to_csv(summary));
  write_file_atomic(kernels_csv, to_csv(data));
  write_file_atomic(report, md);
  files.insert(files.begin(), {report, summary_csv, kernels_csv});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {files, fmt::format("{} models, {} layer types: kernels over every visible lag, coverage, Men et al.'s base "
                             "bound in {:.2f} s",
                             public_models().size(), layer_count, seconds)};
}

}  // namespace ropekit
