#include "ropekit/commands/model_report.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/cancel.hpp"
#include "ropekit/commands/precision_request.hpp"
#include "ropekit/core/input_file.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/models/base_bound.hpp"
#include "ropekit/models/hf_config.hpp"

namespace ropekit {

namespace {

constexpr int kPlotLags = 161;

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

// The rotated part with a frequency schedule (a decoupled head's rope part); none for ALiBi and the like.
const Encoding* schedule_leaf(const Encoding& e) {
  const auto leaves = rotary_leaves(e);
  return !leaves.empty() && schedule_of(*leaves.front()) ? leaves.front() : nullptr;
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

// The first positions past each tolerance of the rotated part through the pipeline, or why there are none.
void add_precision(LayerReport& r, const Encoding& leaf, std::optional<double> seq_len, const ModelReportOptions& o) {
  PrecisionPlan plan;
  try {
    plan = plan_precision(o.command, leaf, *o.pipeline, seq_len);
  } catch (const InputError& e) {
    std::string why = e.what();
    if (why.rfind(o.command + ": ", 0) == 0) why.erase(0, o.command.size() + 2);
    r.precision_note = "not modelled: " + why;
    return;
  }
  const double finite = largest_finite_position(plan);
  if (finite < 0) {
    r.precision_note = "no position has finite angles in this pipeline";
    return;
  }
  const std::vector<LagStream::Segment> all = {{0, 1, static_cast<std::int64_t>(finite) + 1}};
  for (const double tol : o.tolerances)
    r.precision.push_back({tol, first_phase_position(plan, all, tol, PhaseQuantity::phase_error_max),
                           first_phase_position(plan, all, tol, PhaseQuantity::table_phase_error_max)});
}

LayerReport layer_report(const Model& m, const LayerType& l, const ModelReportOptions& o) {
  LayerReport r;
  r.layer = l;
  // Rotary: the encoding has a rotated part with a frequency schedule; NoPE ("nope:dim=<head>") and ALiBi not.
  std::optional<Encoding> e = l.encoding;
  const Encoding* leaf = schedule_leaf(*e);
  r.rotary = leaf != nullptr;
  r.family = family_name(l.encoding);
  if (!r.rotary) e.reset();
  r.context = context_of(m, e ? &*e : nullptr);
  const double L = r.context;
  const auto span = window_span(l);
  // Positions 0..L-1: lags up to L - 1, and below the window's span.
  r.visible_lags =
      std::max<std::int64_t>(0, static_cast<std::int64_t>(std::min<double>(L, span ? static_cast<double>(*span) : L) - 1));
  const double V = static_cast<double>(r.visible_lags);
  const auto& table_lags = model_report_table_lags();
  if (!e) {
    for (double lag : table_lags)
      r.table_kernel.push_back(lag <= V && r.family == "nope" ? std::optional<double>(1.0) : std::nullopt);
  } else {
    // The rotated part's schedule (a decoupled head is a direct sum: its rope part carries the frequencies); a base
    // and its bound for a geometric one (a GGUF file's rope_freqs make an explicit one).
    const FrequencySchedule* s = schedule_of(*leaf);
    const auto* g = std::get_if<Geometric>(&s->source);
    const bool needs_len = scheme_needs_seq_len(s->scaling) || std::holds_alternative<scaling::LongRope>(s->scaling);
    const std::optional<double> seq_len = needs_len ? std::optional<double>(L) : std::nullopt;
    // Coverage: pairs whose wavelength 2 pi / theta fits within the original context (the scheme's L0, else the
    // context) and within the extended context (frequencies at the extended length).
    const auto orig = scheme_original_length(s->scaling);
    const FrequencyTable f0 = frequencies(*leaf), f1 = seq_len ? frequencies(*leaf, seq_len) : f0;
    auto turns = [](const FrequencyTable& f, double len) {
      std::int64_t c = 0;
      for (Eigen::Index i = 0; i < f.theta.rows(); ++i) c += 2 * std::numbers::pi / f.theta(i, 0) <= len;
      return c;
    };
    const KernelScan sc = scan_kernel(*e, r.visible_lags, seq_len);
    const BaseBound bound =
        g ? smallest_nonnegative_base(*leaf, r.visible_lags, seq_len, BaseScan{10, 1e12, 16}) : BaseBound{};
    Scaling scheme = s->scaling;
    const double* factor = tunable_factor(scheme);
    if (g) r.base = g->base;
    r.scheme = factor ? fmt::format("{}({})", scheme_name(s->scaling), format_number(*factor)) : scheme_name(s->scaling);
    r.pairs = static_cast<std::int64_t>(f0.theta.rows());
    r.turns_within_orig = turns(f0, orig.value_or(L));
    r.turns_within_context = turns(f1, L);
    r.min_kernel = sc.min;
    r.min_kernel_lag = sc.argmin;
    if (sc.first_negative) r.first_negative_lag = sc.first_negative->lag;
    r.base_bound = bound.base;
    Lags at_lags(static_cast<Eigen::Index>(table_lags.size()), 1);
    for (std::size_t i = 0; i < table_lags.size(); ++i) at_lags(static_cast<Eigen::Index>(i), 0) = table_lags[i];
    const Eigen::VectorXd at = kernel(*e, at_lags, seq_len);  // one call; lags past V are blanked
    for (std::size_t i = 0; i < table_lags.size(); ++i)
      r.table_kernel.push_back(table_lags[i] <= V ? std::optional<double>(at[static_cast<Eigen::Index>(i)])
                                                  : std::nullopt);
    r.plot_lags = log_lags(V, kPlotLags);
    Lags lags(static_cast<Eigen::Index>(r.plot_lags.size()), 1);
    for (std::size_t i = 0; i < r.plot_lags.size(); ++i) lags(static_cast<Eigen::Index>(i), 0) = r.plot_lags[i];
    const Eigen::VectorXd phi = kernel(*e, lags, seq_len);
    r.plot_kernel.assign(phi.data(), phi.data() + phi.size());
    if (auto n = ggml_yarn_note(*leaf)) r.notes.push_back(*n);
    if (o.pipeline) add_precision(r, *leaf, seq_len, o);
  }
  r.notes.insert(r.notes.end(), l.notes.begin(), l.notes.end());
  if (l.temperature)
    r.notes.push_back(fmt::format("query scale s(p) = {} / {} / {} / {} at p = 8190 / 8191 / 65536 / 1048576",
                                  g4(query_scale(*l.temperature, 8190)), g4(query_scale(*l.temperature, 8191)),
                                  g4(query_scale(*l.temperature, 65536)), g4(query_scale(*l.temperature, 1048576))));
  if (l.softmax_scale != 1)
    r.notes.push_back(fmt::format("the softmax is multiplied by {} besides the rotary attention factor (its kernel, "
                                  "coverage and bound are the rotated part's but for min_kernel)",
                                  format_significant(l.softmax_scale, 8)));
  return r;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return path.find('\0') == std::string::npos && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

const std::vector<double>& model_report_table_lags() {
  static const std::vector<double> lags = {1, 16, 256, 4000, 32000, 128000, 1000000};
  return lags;
}

ModelReport model_report(const Model& m, const ModelReportOptions& o) {
  ModelReport out;
  for (const auto& l : m.layer_types) {
    check_cancelled();
    out.layers.push_back(layer_report(m, l, o));
  }
  out.notes = m.notes;
  return out;
}

Pipeline model_file_pipeline(const std::string& path, const Model& m, std::string& source,
                             std::vector<std::string>& notes) {
  Pipeline p;
  std::string why;
  p.kind = model_pipeline(m.format, m.model_type, why);  // the rule precision --model applies
  if (p.kind == PipelineKind::ggml) {
    p.dtype = Dtype::fp32;
    source = "GGUF: llama.cpp's f32 rope tables";
    return p;
  }
  // The file was read by read_model already: it parses (Python's Infinity / NaN made strict as the reader does).
  const std::string text = read_file(path, "model file", kMaxConfigJsonBytes);
  const nlohmann::json cfg = nlohmann::json::parse(python_json_to_strict(text, path), nullptr, false);
  std::optional<std::string> key, value;
  for (const nlohmann::json* o : {&cfg, cfg.is_object() && cfg.contains("text_config") ? &cfg["text_config"] : nullptr}) {
    if (!o || !o->is_object() || key) continue;
    for (const char* k : {"dtype", "torch_dtype"}) {  // transformers 5 writes dtype, 4 torch_dtype
      const auto it = o->find(k);
      if (it != o->end() && it->is_string()) {
        key = k, value = it->get<std::string>();
        break;
      }
    }
  }
  p.dtype = Dtype::bf16;
  if (!value) {
    source = "bf16 (assumed)";
    notes.push_back("the config names no dtype (torch_dtype / dtype): precision assumes bf16, the usual checkpoint "
                    "dtype");
    return p;
  }
  source = fmt::format("{} = {}", *key, *value);
  try {
    p.dtype = parse_dtype(*value, Where(path), *key);
    if (p.dtype == Dtype::tf32) p.dtype = Dtype::bf16;  // not a checkpoint dtype
  } catch (const InputError&) {
    notes.push_back(fmt::format("{} = {} is not a dtype ropekit's precision models (fp32, bf16, fp16): precision "
                                "assumes bf16",
                                *key, *value));
  }
  return p;
}

std::vector<FileReport> report_files(const ReportRequest& r) {
  if (r.files.empty()) throw_bad_value(r.command, r.files_name, "none", "at least one model file (config.json, GGUF or a folder holding a config.json)");
  if (r.tolerances.empty()) throw_bad_value(r.command, r.tolerances_name, "none", "at least one tolerance");
  for (const double t : r.tolerances)
    if (!(t > 0 && std::isfinite(t))) throw_bad_value(r.command, r.tolerances_name, format_number(t), "finite and > 0");
  std::vector<FileReport> out;
  double seconds = 0;
  std::size_t layer_types = 0;
  // Every file is read and checked before any is computed.
  for (const auto& given : r.files) {
    FileReport f;
    f.given = given;
    f.path = given;
    if (is_directory(given)) {
      f.path = (std::filesystem::path(given) / "config.json").string();
      struct stat st {};
      if (::stat(f.path.c_str(), &st) != 0)
        throw_bad_value(r.command, r.files_name, "'" + given + "'",
                        "a model file or a folder holding a config.json; this folder has none");
    } else {
      struct stat st {};
      if (given.find('\0') == std::string::npos && ::stat(given.c_str(), &st) != 0)
        throw_bad_value(r.command, r.files_name, "'" + given + "'", "an existing model file (config.json or GGUF) or folder");
    }
    try {
      f.model = read_model(f.path);
      f.pipeline = model_file_pipeline(f.path, f.model, f.dtype_source, f.dtype_notes);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", r.command, e.what()));
    }
    // The kernel scans every visible lag of every pair, and the base bound's scans near the bound about as many
    // again (x 4 here, rates of core/budget.hpp): a context of billions is refused rather than run for hours.
    Cost cost;
    for (const auto& l : f.model.layer_types) {
      const auto span = window_span(l);
      const double lags = std::min<double>(f.model.context_length ? static_cast<double>(*f.model.context_length) : 0,
                                           span ? static_cast<double>(*span) : 1e300);
      if (!(lags >= 2) && schedule_leaf(l.encoding))
        throw_bad_value(r.command, r.files_name, "'" + given + "'",
                        fmt::format("a model with a context (max_position_embeddings; GGUF: context_length) of at least 2 positions: "
                                    "the report scans the lags each layer sees, and layer type '{}' sees {}",
                                    l.name, f.model.context_length ? format_number(lags) + " positions"
                                                                   : std::string("none (the file gives no context)")));
      cost.seconds += lags * std::max(1, l.rotary_dims / 2) * 4 / kElementsPerSecond;
    }
    seconds += cost.seconds;
    layer_types += f.model.layer_types.size();
    if (!cost.fits())
      throw_bad_value(r.command, r.files_name, "'" + given + "'",
                      fmt::format("a model whose layers' visible lags can be scanned within the time cap: this one {}",
                                  cost.excess()));
    out.push_back(std::move(f));
  }
  if (r.announce)
    r.announce(fmt::format("{} file(s), {} layer type(s): kernels over every visible lag, base bounds, precision",
                           out.size(), layer_types),
               seconds);
  ModelReportOptions o;
  o.command = r.command;
  o.tolerances = r.tolerances;
  for (auto& f : out) {
    o.pipeline = f.pipeline;
    f.tolerances = r.tolerances;
    f.report = model_report(f.model, o);
  }
  return out;
}

}  // namespace ropekit
