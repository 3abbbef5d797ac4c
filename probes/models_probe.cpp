// Built-in probe `models`: the config.json of 14 public checkpoints (data/models/, compiled in), each layer type's
// encoding as ropekit reads it (lib/ropekit/models/), and per layer type:
//   1. the kernel Phi(Dp) over the lags the layer can see (its window) up to the model's context, with its minimum;
//   2. wavelength coverage: how many rotating pairs complete a turn within the original and the extended context;
//   3. Men et al.'s base bound (models/base_bound.hpp): the smallest base whose kernel stays >= 0 over those lags;
//   4. the framework notes of the reader, and where llama.cpp's YaRN (truncated correction dims) differs.
#include "probes/models_probe.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <numbers>

#include <fmt/format.h>

#include "reports/output.hpp"
#include "reports/plot.hpp"
#include "reports/table.hpp"
#include "ropekit/core/embedded.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/models/base_bound.hpp"
#include "ropekit/models/hf_config.hpp"
#include "ropekit/models/model.hpp"

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

constexpr int kPlotLags = 161;
const std::vector<double> kTableLags = {1, 16, 256, 4000, 32000, 128000, 1000000};

std::string g4(double v) { return format_significant(v, 4); }

// The extended context: max_position_embeddings, or YaRN's orig x factor where it stretches past it (Qwen2.5's
// documented YaRN x4 on a 32k max_position_embeddings).
double context_of(const Model& m, const Encoding* e) {
  double L = m.context_length ? static_cast<double>(*m.context_length) : 0;
  if (const FrequencySchedule* s = e ? schedule_of(*e) : nullptr) {
    if (const auto* y = std::get_if<scaling::Yarn>(&s->scaling); y && y->factor) L = std::max(L, y->orig * *y->factor);
  }
  return L;
}

std::vector<double> log_lags(double V, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const double l = std::round(std::pow(V, static_cast<double>(i) / (n - 1)));
    if (out.empty() || l > out.back()) out.push_back(l);
  }
  return out;
}

// llama.cpp's reading of a YaRN layer: ggml's ramp with truncated correction dims (it has no truncate = false); the
// largest relative frequency difference from transformers' reading. None when the layer is not YaRN or ggml refuses.
std::optional<std::string> ggml_yarn_note(const Encoding& e) {
  const FrequencySchedule* s = schedule_of(e);
  const auto* y = s ? std::get_if<scaling::Yarn>(&s->scaling) : nullptr;
  if (!y) return std::nullopt;
  if (y->mscale || y->mscale_all_dim)
    return std::string("llama.cpp: YaRN's mscale / mscale_all_dim are applied in its model graph, not its rope kernel");
  Encoding g = e;
  std::get<scaling::Yarn>(schedule_of(g)->scaling).truncate = true;
  const FrequencyTable hf = frequencies(e), gg = frequencies(g, std::nullopt, Convention::ggml, false);
  double worst = 0;
  Eigen::Index at = 0;
  for (Eigen::Index i = 0; i < hf.theta.rows(); ++i) {
    const double d = std::abs(gg.theta(i, 0) - hf.theta(i, 0)) / hf.theta(i, 0);
    if (d > worst) worst = d, at = i;
  }
  if (worst == 0 && gg.attention_factor == hf.attention_factor)
    return std::string("llama.cpp (ggml's YaRN ramp): the same frequencies and attention factor");
  return fmt::format("llama.cpp (ggml's YaRN ramp{}): theta differs by up to {} relative (pair {}); attention "
                     "factor {} vs transformers' {}",
                     y->truncate ? "" : ", correction dims truncated though the file says truncate = false", g4(worst),
                     at, format_significant(gg.attention_factor, 8), format_significant(hf.attention_factor, 8));
}

}  // namespace

ProbeResult run_models_probe(const ProbeContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::filesystem::path dir(ctx.out_dir);
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;

  Table summary, kernels, data;
  summary.columns = {"model",      "layer_type",        "layers",         "head_dim",   "rotary_dims", "base",
                     "scheme",     "window",            "context",        "visible_lags", "pairs",     "turns_within_orig",
                     "turns_within_context", "min_kernel", "min_kernel_lag", "first_negative_lag", "men_base_bound",
                     "base_at_or_above_bound", "attention_factor", "softmax_scale"};
  kernels.columns = {"model", "layer_type"};
  for (double l : kTableLags) kernels.columns.push_back(fmt::format("Phi({})", static_cast<std::int64_t>(l)));
  data.columns = {"model", "layer_type", "encoding", "lag", "kernel"};
  std::map<std::string, std::vector<PlotSeries>> plots;
  std::vector<std::string> family_order;
  std::string notes_md;
  int negative = 0, below_bound = 0, layer_count = 0, rotary_count = 0;

  for (const auto& pm : public_models()) {
    const Model m = read_hf_config(std::string(embedded_file(pm.file)), pm.file);
    if (std::find(family_order.begin(), family_order.end(), pm.family) == family_order.end())
      family_order.push_back(pm.family);
    std::string model_notes;
    for (const auto& l : m.layer_types) {
      ++layer_count;
      const bool rotary = !l.encoding.starts_with("nope");  // "nope:dim=<head>" for a NoPE layer
      rotary_count += rotary;
      const std::optional<Encoding> e = rotary ? std::optional<Encoding>(parse_encoding(l.encoding)) : std::nullopt;
      const double L = context_of(m, e ? &*e : nullptr);
      const auto span = window_span(l);
      // Positions 0..L-1: lags up to L - 1, and below the window's span.
      const auto V = static_cast<std::int64_t>(std::min<double>(L, span ? static_cast<double>(*span) : L) - 1);
      std::vector<Cell> row{pm.name, l.name, static_cast<std::int64_t>(l.layers), static_cast<std::int64_t>(l.head_dim),
                            static_cast<std::int64_t>(l.rotary_dims)};
      std::vector<Cell> krow{pm.name, l.name};
      if (!e) {
        row.insert(row.end(), {Cell(), std::string("nope"), l.window, L, static_cast<double>(V), Cell(), Cell(), Cell(),
                               1.0, Cell(), Cell(), Cell(), Cell(), l.attention_factor, l.softmax_scale});
        for (double lag : kTableLags) krow.push_back(lag <= static_cast<double>(V) ? Cell(std::string("1")) : Cell());
      } else {
        // The rotated part's schedule (a decoupled head is a direct sum: its rope part carries the frequencies).
        const Encoding& leaf = *rotary_leaves(*e).front();
        const FrequencySchedule* s = schedule_of(leaf);
        const auto& g = std::get<Geometric>(s->source);
        const bool needs_len = scheme_needs_seq_len(s->scaling) || std::holds_alternative<scaling::LongRope>(s->scaling);
        const std::optional<double> seq_len = needs_len ? std::optional<double>(L) : std::nullopt;
        // Coverage: pairs whose wavelength 2 pi / theta fits within the original context (the scheme's L0, else the
        // context) and within the extended context (frequencies at the extended length).
        const auto orig = scheme_original_length(s->scaling);
        const FrequencyTable f0 = frequencies(leaf), f1 = seq_len ? frequencies(leaf, seq_len) : f0;
        auto turns = [](const FrequencyTable& f, double len) {
          std::int64_t c = 0;
          for (Eigen::Index i = 0; i < f.theta.rows(); ++i) c += 2 * std::numbers::pi / f.theta(i, 0) <= len;
          return c;
        };
        const KernelScan sc = scan_kernel(*e, V, seq_len);
        const BaseBound bound = smallest_nonnegative_base(leaf, V, seq_len, BaseScan{10, 1e12, 16});
        negative += sc.first_negative.has_value();
        below_bound += bound.base && g.base < *bound.base;
        Scaling scheme = s->scaling;
        const double* factor = tunable_factor(scheme);
        row.insert(row.end(),
                   {g.base, factor ? fmt::format("{}({})", scheme_name(s->scaling), format_number(*factor))
                                   : scheme_name(s->scaling),
                    l.window, L, static_cast<double>(V), static_cast<std::int64_t>(f0.theta.rows()),
                    turns(f0, orig.value_or(L)), turns(f1, L), sc.min, static_cast<double>(sc.argmin),
                    sc.first_negative ? Cell(static_cast<double>(sc.first_negative->lag)) : Cell(),
                    bound.base ? Cell(*bound.base) : Cell(), bound.base ? Cell(g.base >= *bound.base) : Cell(),
                    l.attention_factor, l.softmax_scale});
        Lags table_lags(static_cast<Eigen::Index>(kTableLags.size()), 1);
        for (std::size_t i = 0; i < kTableLags.size(); ++i) table_lags(static_cast<Eigen::Index>(i), 0) = kTableLags[i];
        const Eigen::VectorXd at = kernel(*e, table_lags, seq_len);  // one call; lags past V are blanked
        for (std::size_t i = 0; i < kTableLags.size(); ++i)
          krow.push_back(kTableLags[i] <= static_cast<double>(V) ? Cell(g4(at[static_cast<Eigen::Index>(i)])) : Cell());
        const auto lags_v = log_lags(static_cast<double>(V), kPlotLags);
        Lags lags(static_cast<Eigen::Index>(lags_v.size()), 1);
        for (std::size_t i = 0; i < lags_v.size(); ++i) lags(static_cast<Eigen::Index>(i), 0) = lags_v[i];
        const Eigen::VectorXd phi = kernel(*e, lags, seq_len);
        PlotSeries line;
        line.label = m.layer_types.size() > 1 ? fmt::format("{} {}", pm.name, l.name) : pm.name;
        line.x = lags_v;
        line.y.assign(phi.data(), phi.data() + phi.size());
        plots[pm.family].push_back(line);
        for (std::size_t i = 0; i < lags_v.size(); ++i)
          data.add_row({pm.name, l.name, l.encoding, lags_v[i], phi[static_cast<Eigen::Index>(i)]});
        if (auto n = ggml_yarn_note(leaf)) model_notes += fmt::format("- {}: {}\n", l.name, *n);
      }
      summary.add_row(row);
      kernels.add_row(krow);
      for (const auto& n : l.notes) model_notes += fmt::format("- {}: {}\n", l.name, n);
      if (l.temperature)
        model_notes += fmt::format("- {}: query scale s(p) = {} / {} / {} / {} at p = 8190 / 8191 / 65536 / 1048576\n",
                                   l.name, g4(query_scale(*l.temperature, 8190)), g4(query_scale(*l.temperature, 8191)),
                                   g4(query_scale(*l.temperature, 65536)), g4(query_scale(*l.temperature, 1048576)));
      if (l.softmax_scale != 1)
        model_notes += fmt::format("- {}: the softmax is multiplied by {} besides the rotary attention factor (its "
                                   "kernel, coverage and bound are the rotated part's but for min_kernel)\n",
                                   l.name, format_significant(l.softmax_scale, 8));
    }
    for (const auto& n : m.notes) model_notes += fmt::format("- (file): {}\n", n);
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
