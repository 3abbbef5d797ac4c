// ropekit design: inverse design of RF-RoPE frequencies from a target kernel (RF-RoPE Corollary 3, Bochner): the
// options, and the report (md, json or csv) of the library's design (design/inverse_design.hpp, where the three
// inputs, their routes and checks are described). Exit code 3 (after writing everything) when Phi is not positive
// definite.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "reports/frequency_export.hpp"
#include "reports/output.hpp"
#include "reports/progress.hpp"
#include "reports/table.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/design/design.hpp"
#include "ropekit/design/inverse_design.hpp"
#include "ropekit/version.hpp"

namespace ropekit {

namespace {

using ordered_json = nlohmann::ordered_json;

const std::string kCommand = "ropekit design";
// Rows printed by md and csv (evenly spaced, first and last kept); json prints every row up to kJsonRows.
constexpr std::size_t kTextRows = 200, kJsonRows = 20000;
// Frequencies listed in md (json and --export have all of them).
constexpr int kMarkdownFrequencies = 64;

using Design = DesignResult;
using Source = DesignSource;

// The options: the library's request, bound field by field, and the report's.
struct DesignArgs {
  DesignRequest req;
  std::string format = "md", out, export_path;
  std::vector<std::string> models;  // --model FILE[:LAYER_TYPE]: --kernel kernel:<its encoding>
  CLI::Option* seed_opt = nullptr;
};

// The library's design (design/inverse_design.hpp) of the options; long runs are announced on stderr.
Design run(const DesignArgs& a) {
  DesignRequest r = a.req;
  r.seed_given = a.seed_opt && a.seed_opt->count();
  r.announce = [](const std::string& what, double seconds) { announce(kCommand, what, seconds); };
  return inverse_design(r);
}

// Evenly spaced row indices, first and last kept, at most `cap`.
std::vector<Eigen::Index> row_subset(Eigen::Index n, std::size_t cap) {
  std::vector<Eigen::Index> out;
  if (static_cast<std::size_t>(n) <= cap) {
    for (Eigen::Index i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (std::size_t r = 0; r < cap; ++r) {
    const auto i = static_cast<Eigen::Index>(std::llround(static_cast<double>(r) * static_cast<double>(n - 1) /
                                                          static_cast<double>(cap - 1)));
    if (out.empty() || out.back() != i) out.push_back(i);
  }
  return out;
}

Table rows_table(const Design& d, std::size_t cap) {
  Table t;
  t.columns = {"lag", "target", "realised", "error", "prop4_variance", "prop4_variance_iid"};
  auto cell = [](double v) { return std::isnan(v) ? Cell() : Cell(v); };
  for (Eigen::Index i : row_subset(d.lags.size(), cap))
    t.add_row({d.lags[i], d.target[i], d.realised[i], d.realised[i] - d.target[i], cell(d.variance[i]),
               cell(d.variance_iid[i])});
  return t;
}

std::string source_name(Source s) {
  return s == Source::family ? "spectral family" : s == Source::encoding ? "kernel of an encoding" : "data table";
}

std::string verdict(const Design& d) {
  if (d.source == Source::family)
    return "positive definite by construction (Bochner: a density's characteristic function)";
  if (d.lines)
    return fmt::format("positive definite: Phi = sum_i m_i cos(w_i Dp) with every m_i >= 0 (Bochner's measure is these "
                       "{} atoms; the sum equals the encoding's kernel to {} on every lag)",
                       d.lines->w.size(), format_significant(d.line_residual, 3));
  if (std::isfinite(d.odd_at))
    return fmt::format("NOT positive definite: the kernel is not even, Phi({}) = {} but Phi(-{}) = {} (Bochner: a "
                       "real positive-definite Phi has Phi(-Dp) = Phi(Dp)); the transform of Phi on Dp >= 0 follows",
                       format_number(d.odd_at), format_significant(d.odd_values.first, 6), format_number(d.odd_at),
                       format_significant(d.odd_values.second, 6));
  if (d.est.positive_definite)
    return fmt::format("positive definite: Fejer-tapered negative mass {} <= tolerance {}",
                       format_significant(d.est.negative_mass, 3), format_significant(d.est.tolerance, 3));
  return fmt::format("NOT positive definite: Fejer-tapered negative mass {} > tolerance {} (no density p has "
                     "Phi = E[cos(Dp w)]; the frequencies realise the clamped density max(p, 0) instead)",
                     format_significant(d.est.negative_mass, 3), format_significant(d.est.tolerance, 3));
}

ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }
ordered_json numbers(const Eigen::VectorXd& v) {
  ordered_json a = ordered_json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(number(v[i]));
  return a;
}

std::string to_json_report(const Design& d, const DesignArgs& a, DesignSampling sampling, const CliContext& ctx) {
  ordered_json j;
  j["ropekit"] = kVersion;
  j["command"] = ctx.command;
  j["kernel"] = a.req.kernel;
  j["source"] = source_name(d.source);
  j["spectrum_route"] = d.route;
  j["spectrum_route_reason"] = d.route_reason.empty() ? ordered_json(nullptr) : ordered_json(d.route_reason);
  j["line_identity_residual"] = number(d.line_residual);
  j["positive_definite"] = d.est.positive_definite;
  j["negative_mass"] = number(d.est.negative_mass);
  j["negative_mass_untapered"] = number(d.est.negative_mass_untapered);
  j["not_even_at"] = number(d.odd_at);  // a lag where Phi(-Dp) != Phi(Dp) (kernel: inputs), else null
  j["tolerance"] = number(d.est.tolerance);
  j["blocks"] = a.req.blocks;
  j["sampling"] = design_sampling_name(sampling);
  j["seed"] = sampling == DesignSampling::quantile ? ordered_json(nullptr) : ordered_json(a.req.seed);
  j["tuned_encoding"] = d.tuned;
  j["frequencies"] = numbers(d.freqs);
  j["lag_step"] = number(d.step);
  j["w_max"] = number(d.est.w_max);
  j["density_integral"] = number(d.est.integral);
  j["sampling_density"] = d.source == Source::family ? "closed form"
                          : d.lines                    ? "lines"
                          : d.fejer                    ? "fejer"
                                                       : "interpolant";
  ordered_json density;
  if (d.lines) {
    density["kind"] = "lines";
    density["w"] = numbers(d.lines->w);
    density["mass"] = numbers(d.lines->mass);
  } else {
    density["kind"] = "density";
    density["w"] = numbers(d.est.w);
    density["p"] = numbers(d.est.p);
    if (d.source == Source::family) density["p_closed_form"] = numbers(d.p_closed_form);
    else density["p_fejer"] = numbers(d.est.p_fejer);
  }
  j["density"] = std::move(density);
  j["error"] = {{"max_abs", number(d.max_abs)}, {"rms", number(d.rms)}, {"lags", d.lags.size()}};
  const Table t = rows_table(d, kJsonRows);
  j["rows_subsampled"] = t.rows.size() < static_cast<std::size_t>(d.lags.size());
  ordered_json rows = ordered_json::array();
  for (const auto& r : t.rows) {
    ordered_json o;
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      o[t.columns[c]] = std::holds_alternative<double>(r[c]) ? number(std::get<double>(r[c])) : ordered_json(nullptr);
    rows.push_back(std::move(o));
  }
  j["rows"] = std::move(rows);
  return j.dump(2) + "\n";
}

std::string to_markdown_report(const Design& d, const DesignArgs& a, DesignSampling sampling, const CliContext& ctx) {
  std::string md =
      fmt::format("# Inverse design of `{}`\n\n- ropekit {}; command: `{}`\n", a.req.kernel, kVersion, ctx.command);
  md += fmt::format("- input: {}; D = {} blocks, sampling {}{}\n\n", source_name(d.source), a.req.blocks,
                    design_sampling_name(sampling),
                    sampling == DesignSampling::quantile ? " (deterministic)" : fmt::format(", seed {}", a.req.seed));
  Table s;
  s.columns = {"quantity", "value"};
  s.add_row({"positive_definite", d.est.positive_definite});
  if (d.source != Source::family) s.add_row({"spectrum route", d.route});
  if (d.lines) {
    const LineSpectrum& l = *d.lines;
    s.add_row({"negative mass (atoms)", d.est.negative_mass});
    s.add_row({"tolerance", d.est.tolerance});
    s.add_row({"atoms", static_cast<std::int64_t>(l.w.size())});
    if (l.w[0] == 0) s.add_row({"mass at w = 0 (identity dims)", l.mass[0]});
    s.add_row({"line identity max |sum m_i cos(w_i Dp) - Phi|", d.line_residual});
    s.add_row({"lag step h", d.step});
    s.add_row({"w_max (largest atom)", d.est.w_max});
    s.add_row({"atom mass sum", d.est.integral});
  } else {
    s.add_row({"negative_mass (Fejer)", d.est.negative_mass});
    s.add_row({"tolerance", d.est.tolerance});
    if (d.source != Source::family) {
      s.add_row({"negative_mass_untapered (clipped by sampling)", d.est.negative_mass_untapered});
      s.add_row({"lag step h", d.step});
    }
    s.add_row({"w_max", d.est.w_max});
    s.add_row({"density points", static_cast<std::int64_t>(d.est.w.size())});
    s.add_row({"density integral 2 int_0^w_max p", d.est.integral});
  }
  s.add_row({"lags compared", static_cast<std::int64_t>(d.lags.size())});
  s.add_row({"max |realised - target|", d.max_abs});
  s.add_row({"rms (realised - target)", d.rms});
  md += to_markdown(s);
  md += fmt::format("\n**Verdict:** {}.\n\n", verdict(d));
  if (d.source == Source::encoding && !d.lines)
    md += fmt::format("Spectrum route: table ({}).\n\n", d.route_reason);
  if (d.lines)
    md += fmt::format("Frequencies drawn from the {} atoms (the inverse of their discrete CDF; --format json lists them "
                      "with their masses).\n\n",
                      d.lines->w.size());
  else if (d.source != Source::family)
    md += fmt::format("Frequencies drawn from {}.{}\n\n",
                      d.fejer ? "the Fejer-tapered density p_F (its kernel is Phi(x)(1 - x/X), X = N h)"
                              : "max(p, 0), p the transform of the interpolant",
                      !d.fejer && d.est.negative_mass_untapered > 1e-3
                          ? fmt::format(" Sampling clipped a negative mass of {} (truncation ripples or line side lobes); "
                                        "for line spectra (RoPE-like kernels) --taper fejer, with lags well beyond "
                                        "those of interest, concentrates the frequencies on the lines{}.",
                                        format_significant(d.est.negative_mass_untapered, 3),
                                        d.source == Source::encoding
                                            ? " (rope, rope-matched and rf-rope kernels: the lines route samples "
                                              "the lines themselves)"
                                            : "")
                          : std::string());
  const auto D = d.freqs.size();
  md += "## Tuned encoding\n\n";
  if (D <= kMarkdownFrequencies) md += fmt::format("`{}`\n\n", d.tuned);
  else md += fmt::format("`{}` ({} values: see --format json or --export)\n\n",
                         d.source == Source::family ? d.tuned : "rope:freqs=[...]", D);
  md += fmt::format("## Frequencies ({}{})\n\n", D, D > kMarkdownFrequencies ? fmt::format(", first {}", kMarkdownFrequencies) : "");
  for (Eigen::Index i = 0; i < std::min<Eigen::Index>(D, kMarkdownFrequencies); ++i)
    md += fmt::format("{}{}", i ? ", " : "", format_significant(d.freqs[i], 6));
  md += "\n\n## Realised kernel (1/D) sum cos(w_i Dp) against the target\n\n";
  const Table t = rows_table(d, kTextRows);
  if (t.rows.size() < static_cast<std::size_t>(d.lags.size()))
    md += fmt::format("{} of {} lags, evenly spaced (errors above are over all of them).\n\n", t.rows.size(), d.lags.size());
  md += to_markdown(t);
  return md;
}

void run_design(const DesignArgs& a, const CliContext& ctx) {
  const Where where = Where::options(kCommand);
  const Format format = parse_format_option(kCommand, a.format);
  if (format == Format::latex) throw_bad_value(where, "format", "'" + a.format + "'", "one of md, csv, json");
  if (!a.export_path.empty()) check_frequency_export_path(a.export_path, a.out, where);
  check_output_path(a.out);
  const DesignSampling sampling = parse_design_sampling(a.req.sampling, kCommand);
  const Design d = run(a);
  const std::string report = format == Format::json ? to_json_report(d, a, sampling, ctx)
                             : format == Format::md ? to_markdown_report(d, a, sampling, ctx)
                                                    : to_csv(rows_table(d, kTextRows));
  {
    OutputBatch batch;  // the export and the report land together (a failed write leaves neither)
    if (!a.export_path.empty()) write_file_atomic(a.export_path, frequency_export_bytes(a.export_path, d.freqs));
    emit(a.out, report);
    batch.commit();
  }
  if (!d.est.positive_definite) {
    std::cerr << fmt::format("{}: {}; output written, exit code 3\n", kCommand, verdict(d));
    throw ChecksFailed{};
  }
}

}  // namespace

void add_design_commands(CLI::App& app, const CliContext& ctx) {
  auto a = std::make_shared<DesignArgs>();
  auto* c = app.add_subcommand(
      "design",
      "Inverse design (RF-RoPE Corollary 3, Bochner): the spectral density of a target kernel, a positive-definiteness "
      "certificate, and D frequencies realising it; exit code 3 (output written) when the kernel is not positive "
      "definite");
  auto* kernel = c->add_option("--kernel", a->req.kernel,
                "the target: a 1-D spectral family (gaussian:sigma=2, cauchy:b=1, matern:nu=2.5,l=3, ...: closed-form "
                "density, the library's rf-rope draw); kernel:ENCODING (Phi = the encoding's kernel on --lags, e.g. "
                "kernel:rope:dim=128,scaling=yarn(factor=32,orig=4096)); or data:FILE.csv (header lag,value; lags an "
                "even grid k h from 0 to 1e-9 relative, refused otherwise (no resampling); Phi(0) = 1 to 1e-9)");
  add_model_option(c, a->models, false)
      ->description("a model file (config.json or GGUF) instead of --kernel: FILE, or FILE:LAYER_TYPE when its layer "
                    "types differ, stands for kernel:ENCODING of that layer type's encoding (see `ropekit model "
                    "FILE`; the kernel over every lag, the layer's window not applied)")
      ->excludes(kernel);
  add_integer_option(c, kCommand, "--blocks", a->req.blocks, "D, the number of frequencies (rotary blocks)", 1,
                     std::int64_t{1} << 24)
      ->required();
  c->add_option("--sampling", a->req.sampling,
                "quantile (deterministic w_i = Q((i - 1/2)/D)), iid (w_i = Q(U_i)) or antithetic. Tables: antithetic "
                "pairs Q(U), Q(1 - U) on |w|'s CDF (variance-reducing); spectral families: the library's rf-rope "
                "antithetic pairs (w, -w), which share cos and so are no variance reduction for the kernel")
      ->capture_default_str();
  a->seed_opt = add_seed_option(c, kCommand, "--seed", a->req.seed,
                                fmt::format("seed of iid and antithetic draws (default {}; refused with quantile)",
                                            kDefaultSeed));
  c->add_option("--spectrum-route", a->req.spectrum_route,
                "kernel:ENCODING only: lines (the default when the encoding is rope, rope-matched or 1-D rf-rope and "
                "its kernel equals the sum of its lines on every lag: the exact atoms m_i at theta_i, PD by their "
                "signs, frequencies from their discrete CDF) or table (the density estimated from the sampled kernel, "
                "as for data: tables; the default for every other encoding)");
  c->add_option("--taper", a->req.taper,
                "table route only: the density the frequencies are drawn from: none = max(p, 0), p the interpolant's "
                "transform (its kernel is Phi at the table's lags where p >= 0); fejer = p_F (>= 0 for PD kernels, "
                "concentrated on spectral lines, but its kernel is Phi(x)(1 - x/X), X = N h)")
      ->capture_default_str();
  c->add_option("--lags", a->req.lags_text,
                "lags compared (and, for kernel:, the even grid Phi is sampled on): list or start:stop[:step], stop "
                "excluded (default 0:4097, i.e. 0..4096); not for data: inputs");
  add_integer_option(c, kCommand, "--wpoints", a->req.wpoints,
                     "density grid points M on [0, w_max] (default: tables 2(N-1)+1 clamped to [4097, 65537]; "
                     "families 4097)",
                     2, std::int64_t{1} << 26);
  add_real_option(c, kCommand, "--wmax", a->req.wmax,
                  "spectral families only: top of the density grid (default: the 1 - 1e-6 two-sided quantile); tables "
                  "use pi/h");
  add_real_option(c, kCommand, "--tolerance", a->req.tolerance,
                  "tables only: the negative-mass threshold of the certificate (default 8 N eps (|Phi_0| + 2 sum "
                  "|Phi_k|), the rounding bound; raise it to the table's own precision)");
  c->add_option("--format", a->format,
                "md (summary, verdict, frequencies, error table), json (everything) or csv (the error table)")
      ->capture_default_str();
  c->add_option("--out", a->out, "output file (default: stdout); written only if the run completes (exit code 0 or 3)");
  c->add_option("--export", a->export_path,
                "also write the frequencies: FILE.txt (one per line, %.17g), FILE.json (an array) or FILE.npy (NumPy "
                "float64)");
  c->callback([a, ctx] {
    std::string encoding;
    take_model_encoding(kCommand, a->models, encoding);
    if (!encoding.empty()) a->req.kernel = "kernel:" + encoding;
    if (a->req.kernel.empty()) throw InputError(std::string(kCommand) + ": --kernel = none (must be given, or --model)");
    run_design(*a, ctx);
  });
}

}  // namespace ropekit
