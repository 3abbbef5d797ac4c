// ropekit kernel | verify master | verify variance | verify convergence | verify sampling | verify content:
// RF-RoPE spectral kernels and Monte Carlo checks of the Master Theorem and Proposition 4
// (spec rf-rope.md sections 1-4), and of an encoding's content mean and variance (encodings.md section 1).
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/cli.hpp"
#include "cli/cli_encoding.hpp"
#include "reports/output.hpp"
#include "reports/progress.hpp"
#include "reports/shard.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/version.hpp"
#include "reports/table.hpp"
#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/mc/content_verify.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "ropekit/commands/verify_request.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

namespace {

const char* kShardHelp =
    "i/n: compute shard i (counted from 0) of n of the lags, for job arrays; `ropekit merge` joins the n files into "
    "the unsharded output";

const char* kLagsHelp =
    "lags: k = 1: 0.5,1,2 or start:stop[:step]; k-D: vectors separated by ';', components by ',' (\"1,0;0,2\")";

struct KernelArgs {
  std::string spectrum, lags, format, out, plot;  // lags default: default_lag_text(k, 5); format: "" (csv, or npy)
  std::vector<std::string> encodings, models;
  std::vector<ModelLayer> layers;  // empty, or one per encoding (encoding_kernel_args.layers)
  std::optional<double> rho, seq_len, position;
  KernelPlotArgs plot_options;
  std::vector<std::string> columns;  // --columns: these only, in this order
  bool families = false;
  int block_rows = 1 << 16;  // rows evaluated and written at a time (memory: ~1 KB each)
};

struct VerifyArgs {
  std::string spectrum, draw_from, lags, format = "csv", out, content, sampling = "iid", q, k, blocks_list, shard;
  bool power = false;
  int blocks = 64;
  std::int64_t trials = 0;  // 0: the subcommand's default
  std::uint64_t seed = kDefaultSeed;
  int threads = 0;
  double alpha = 1e-6;
  CLI::Option* blocks_opt = nullptr;  ///< given explicitly: must agree with --q/--k
};

// Printing a table cell (shortest round trip): measured 1e7 per second, divided by 5 as budget.hpp's rates.
constexpr double kPrintedCellsPerSecond = 2e6;

// Every lag component within kMaxRfLag (spectrum.hpp).
void check_lag_range(const Where& where, const Eigen::MatrixXd& lags) {
  check_rf_lag_range(where, std::span<const double>(lags.data(), static_cast<std::size_t>(lags.size())));
}

// A double column that is a number for k = 1 and text "1,0" for k >= 2.
Cell lag_cell(const std::vector<double>& lag) {
  if (lag.size() == 1) return lag.front();
  return lag_text(lag);
}

// verify --shard i/n: a contiguous part of the lags (every lag costs the same). The Monte Carlo streams are per
// chunk of trials, not per lag: every chunk draws its frequencies (or content) once and scores every lag with them,
// so a run on some of the lags draws the same numbers and gives those lags the same moments, provided each lag's
// score is computed alone. It is, except for an evenly spaced grid (up to rounding) of >= 8 1-D lags, which
// score_moments evaluates by one angle-addition recurrence over all of them (monte_carlo.hpp scores_as_grid):
// such a run is not sharded, and a shard's own lags are passed in an order that is never such a grid.

struct LagShard {
  std::optional<Shard> shard;
  Eigen::Index first = 0, total = 0;
  Eigen::MatrixXd lags;  ///< the lags to run, rows 0 and 1 swapped if `swapped`
  bool swapped = false;
  std::vector<std::size_t> positions() const {
    std::vector<std::size_t> p;
    for (Eigen::Index i = 0; i < lags.rows(); ++i) p.push_back(static_cast<std::size_t>(first + i));
    return p;
  }
  /// Puts results computed in the order of `lags` back in the lags' order.
  template <class T>
  void restore(std::vector<T>& rows) const {
    if (swapped) std::swap(rows[0], rows[1]);
  }
  std::string note() const {
    return shard ? fmt::format(" (shard {}/{}: {} of {} lags)", shard->index, shard->count, lags.rows(), total) : "";
  }
};

LagShard shard_lags(const std::string& command, const std::string& text, const Eigen::MatrixXd& lags, bool grid_path) {
  LagShard ls;
  ls.total = lags.rows();
  ls.lags = lags;
  if (text.empty()) return ls;
  ls.shard = parse_shard(text, command);
  if (ls.shard->count == 1) return ls;  // the whole run, computed as without --shard
  if (grid_path && scores_as_grid(lags))
    throw_bad_value(command, "--shard", "'" + text + "'",
                    fmt::format("absent (or 0/1) for --lags an evenly spaced grid of {} 1-D lags: the Monte Carlo "
                                "scores such a grid (>= {} lags) by one recurrence over all of them, so a shard cannot "
                                "reproduce its rows to the last digit; list the lags in another order (e.g. the first "
                                "two swapped) to shard them",
                                lags.rows(), kMinGridLags));
  const auto [first, last] = shard_range(static_cast<std::size_t>(lags.rows()), *ls.shard);
  ls.first = static_cast<Eigen::Index>(first);
  ls.lags = lags.middleRows(ls.first, static_cast<Eigen::Index>(last - first));
  // Swapping the first two lags of an increasing (near) grid leaves no grid of either step.
  if (grid_path && scores_as_grid(ls.lags)) {
    ls.lags.row(0).swap(ls.lags.row(1));
    ls.swapped = true;
    if (scores_as_grid(ls.lags)) throw std::logic_error("shard_lags: swapped lags still a grid");
  }
  return ls;
}

std::string table_text(const Table& t, Format format, const LagShard& ls, const CliContext& ctx) {
  if (!ls.shard) return render(t, format);
  return shard_file(shard_header(*ls.shard, format, ctx.run, kVersion, static_cast<std::size_t>(ls.total), ls.positions()), t);
}

void run_kernel(const KernelArgs& a) {
  const std::string command = "ropekit kernel";
  const Where where = Where::options(command);
  const Format format = parse_table_format_option(command, a.format, a.out);
  if (a.families && (!a.spectrum.empty() || !a.encodings.empty() || !a.lags.empty()))
    throw InputError(command + ": --families lists the families; give it without --spectrum, --encoding and --lags");
  if (a.families) {
    Table t;
    t.columns = {"spelling", "frequencies", "Phi(Dp)"};
    for (const auto& f : spectrum_families()) t.add_row({f.spelling, f.frequencies, f.kernel});
    emit(a.out, render(t, format));
    return;
  }
  if (!a.spectrum.empty() && !a.encodings.empty())
    throw_bad_value("ropekit kernel", "--spectrum", quote(a.spectrum), "absent with --encoding (give one of them)");
  if (a.spectrum.empty() && a.encodings.empty())
    throw InputError("ropekit kernel: give exactly one of --spectrum SPEC and --encoding ENCODING...");
  if (!a.encodings.empty()) {
    run_encoding_kernel(
        EncodingKernelArgs{a.encodings, a.lags,       a.rho,        a.seq_len, a.position,
                           a.format,    a.out,        a.plot,       a.block_rows, a.layers, a.plot_options, a.columns});
    return;
  }
  // Options of the --encoding path only: refused rather than ignored.
  if (a.rho) throw_bad_value(where, "rho", format_number(*a.rho), "given with --encoding only");
  if (a.seq_len) throw_bad_value(where, "seq_len", format_number(*a.seq_len), "given with --encoding only");
  if (!a.plot.empty()) throw_bad_value(where, "plot", a.plot, "given with --encoding only");
  if (!a.columns.empty())
    throw_bad_value(where, "columns", quote(fmt::format("{}", fmt::join(a.columns, ","))), "given with --encoding only");
  if (a.plot_options.any()) throw InputError("ropekit kernel: --plot-* options are given with --encoding and --plot only");
  const Spectrum s = parse_spectrum(a.spectrum);
  check_output_path(a.out);
  const int k = dims(s);
  const std::string lag_text_in = a.lags.empty() ? default_lag_text(k, 5) : a.lags;
  // k = 1: the lags are streamed (ranges expand block by block), so any number of them runs in memory of one
  // block; k-D lags are lists written out in full and are held.
  std::optional<LagStream> stream;
  Eigen::MatrixXd listed;
  if (k == 1) stream.emplace(lag_text_in, where, "--lags");
  else listed = parse_lags(lag_text_in, k, where, "--lags");
  const std::size_t block = static_cast<std::size_t>(a.block_rows);
  // Time by the family's work per lag (a file spectrum's rows, Matern's quadratures); memory: one block's table.
  auto cost_of = [&](double r) {
    return Cost{std::min(r, static_cast<double>(block)) * 150.0 * 8,
                r * (kernel_values_work(s) / kElementsPerSecond + 5 / kPrintedCellsPerSecond)};
  };
  // The count is exact without a pass (LagStream::count), so the budget refuses first; then every lag is checked
  // before the first row is written (a pass over the stream, cheap next to Phi).
  std::vector<double> buf(k == 1 ? block : 0);
  const std::int64_t count = k == 1 ? stream->count() : listed.rows();
  const double rows = static_cast<double>(count);
  if (!cost_of(rows).fits())
    check_cost(where, "lags", fmt::format("{} lags", count), cost_of(rows),
               fmt::format("{} lags", largest_fitting(1, count, [&](std::int64_t r) {
                             return cost_of(static_cast<double>(r)).fits();
                           })),
               fmt::format("for {}", spelling(s)));
  if (k == 1) {
    for (std::size_t n; (n = stream->next(buf.data(), block)) > 0;)
      check_lag_range(where, Eigen::Map<const Eigen::MatrixXd>(buf.data(), static_cast<Eigen::Index>(n), 1));
    stream->rewind();
  } else {
    check_lag_range(where, listed);
  }
  announce(command, fmt::format("{} lags of {}", count, spelling(s)), cost_of(static_cast<double>(count)).seconds);
  Table t;
  t.columns = {"lag", "phi", "phi2", "var_cos", "var_sin"};
  TableStream out(a.out, format, t.columns);
  std::vector<double> lag(static_cast<std::size_t>(k));
  for (std::int64_t first = 0; first < count;) {
    t.rows.clear();
    const std::size_t n = k == 1 ? stream->next(buf.data(), block)
                                 : static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(block), count - first));
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) {
      if (k == 1) lag[0] = buf[i];
      else
        for (int j = 0; j < k; ++j) lag[static_cast<std::size_t>(j)] = listed(first + static_cast<Eigen::Index>(i), j);
      const KernelValues kv = kernel_values(s, lag);
      t.add_row({lag_cell(lag), kv.phi, kv.phi2, kv.var_cos, kv.var_sin});
    }
    out.add(t);
    first += static_cast<std::int64_t>(n);
  }
  out.finish();
}

// What every verify subcommand needs, validated before any work starts (commands/verify_request.hpp), and the format.
struct Prepared : VerifyPlan {
  Format format;
};

// The options bound to the library's request; --trials 0 is the subcommand's default.
VerifyRequest request_of(const VerifyArgs& a, std::int64_t default_trials, const std::string& command) {
  const Where where = Where::options(command);
  VerifyRequest r;
  r.command = command;
  r.spectrum = a.spectrum;
  if (!a.draw_from.empty()) r.draw_from = a.draw_from;
  r.power = a.power;
  r.lags_text = a.lags;
  r.blocks = a.blocks;
  r.blocks_given = a.blocks_opt && a.blocks_opt->count();
  r.trials = a.trials == 0 ? default_trials : a.trials;
  r.seed = a.seed;
  r.threads = a.threads;
  r.sampling = a.sampling;
  r.alpha = a.alpha;
  if (!a.content.empty()) r.content = a.content;
  if (!a.q.empty()) r.q = parse_number_list(a.q, where, "--q", 2u << 20);
  if (!a.k.empty()) r.k = parse_number_list(a.k, where, "--k", 2u << 20);
  return r;
}

Prepared prepare(const VerifyArgs& a, std::int64_t default_trials, const std::string& what) {
  const std::string command = "ropekit " + what;
  Prepared p;
  p.format = parse_format_option(command, a.format);
  static_cast<VerifyPlan&>(p) = plan_verify(request_of(a, default_trials, command));
  check_output_path(a.out);  // before the Monte Carlo run, not after it
  return p;
}

// Refuses a Monte Carlo run beyond the budget (the library's check); announces a long one.
void check_monte_carlo(const std::string& command, const Prepared& p, double blocks, double repeats) {
  const Cost cost = check_monte_carlo_budget(command, p, blocks, repeats);
  announce(command, fmt::format("{} trials x {} blocks x {} lags{}", p.mc.trials, blocks, static_cast<double>(p.lags.rows()),
                                repeats > 1 ? fmt::format(" x {} schemes", repeats) : std::string()),
           cost.seconds);
}

void run_verify(const VerifyArgs& a, bool variance, const CliContext& ctx) {
  const std::string what = variance ? "verify variance" : "verify master";
  Prepared p = prepare(a, 20000, what);
  const LagShard ls = shard_lags("ropekit " + what, a.shard, p.lags, true);
  if (variance && p.mc.sampling == Sampling::stratified)
    throw InputError("ropekit verify variance: stratified draws have no closed-form variance (compare them with "
                     "`ropekit verify sampling`)");
  VerifyOptions o;
  o.spectrum = p.spectrum;
  o.draw = p.draw;
  o.content = verify_content_of(request_of(a, 20000, "ropekit " + what), "random", p.mc.trials);
  p.lags = ls.lags;
  o.lags = p.lags;
  o.mc = p.mc;
  o.alpha = a.alpha;
  o.bonferroni_lags = static_cast<std::size_t>(ls.total);
  VerifyReport r;
  if (o.lags.rows() > 0) {
    check_monte_carlo("ropekit " + what, p, static_cast<double>(o.content.blocks()), 1);
    Progress progress("ropekit " + what);
    o.mc.progress = [&](double f) { progress.update(f); };
    r = verify(o);
    progress.finish();
    ls.restore(r.lags);
  }

  Table t;
  t.columns = {"lag", "expected", "mean", "stderr", "z", "var_expected", "var_observed"};
  if (variance)
    for (const char* c : {"var_ratio", "var_stderr", "z_var"}) t.columns.push_back(c);
  t.columns.push_back("pass");
  for (const auto& l : r.lags) {
    std::vector<Cell> row = {lag_cell(l.lag), l.expected, l.mean, l.stderr_mean, l.z, l.var_expected, l.var_observed};
    if (variance) {
      row.push_back(l.var_expected > 0 ? Cell(l.var_observed / l.var_expected) : Cell());
      row.push_back(l.var_stderr);
      row.push_back(l.z_var);
    }
    row.push_back(variance ? l.var_pass : l.mean_pass);
    t.add_row(std::move(row));
  }
  emit(a.out, table_text(t, p.format, ls, ctx));
  if (r.lags.empty()) {
    std::cerr << fmt::format("{}{}: no lags in this shard\n", what, ls.note());
    return;
  }
  const bool pass = variance ? r.var_pass : r.mean_pass;
  std::cerr << fmt::format("{}{}: {} ({} lags, max |{}| = {:.3g}, bound {:.3g} = two-sided normal at false-alarm rate {:g} "
                           "per lag: {:g} over all lags, Bonferroni); spectrum {}, drawn from {}{}, D = {}, N = {}, seed {}\n",
                           what, ls.note(), pass ? "PASS" : "FAIL", r.lags.size(), variance ? "z_var" : "z",
                           variance ? r.max_abs_z_var : r.max_abs_z, r.z_critical, r.alpha_per_lag, r.alpha, r.spectrum,
                           r.draw, a.power ? " = " + wrong_density_note(p.spectrum) : std::string(), r.blocks, r.trials, a.seed);
  if (!pass) throw ChecksFailed{};
}

void run_convergence(const VerifyArgs& a) {
  if (!a.shard.empty())
    throw_bad_value("ropekit verify convergence", "--shard", "'" + a.shard + "'",
                    "absent: every row carries the log-log slope fitted over all block counts, which no shard has "
                    "(shard verify master, variance, sampling or content)");
  Prepared p = prepare(a, 4000, "verify convergence");
  if (p.mc.sampling == Sampling::stratified)
    throw InputError("ropekit verify convergence: --sampling stratified has no closed-form variance to compare with "
                     "(use iid or antithetic)");
  ConvergenceOptions o;
  o.spectrum = p.spectrum;
  o.draw = p.draw;
  const std::string command = "ropekit verify convergence";
  const Where where = Where::options(command);
  o.content = content_option(command, a.content.empty() ? "correlated" : a.content);
  o.lags = p.lags;
  o.mc = p.mc;
  if (!a.blocks_list.empty()) {
    o.blocks.clear();
    for (double v : parse_number_list(a.blocks_list, where, "--blocks-list", 1024)) {
      if (!(v >= 1 && v <= (1 << 20)) || v != std::floor(v))
        throw_bad_value(where, "blocks_list", format_number(v), "integers in [1, 1048576]");
      o.blocks.push_back(static_cast<int>(v));
    }
    if (o.blocks.size() < 2)
      throw_bad_value(where, "blocks_list", a.blocks_list, "at least two block counts (for a slope)");
  }
  double total_blocks = 0;
  for (int D : o.blocks) total_blocks += D;
  check_monte_carlo(command, p, total_blocks, 1);
  Progress progress("ropekit verify convergence");
  int part = 0;
  const int parts = static_cast<int>(o.blocks.size());
  // convergence() runs the block counts in order; count them through the callback's fraction resets.
  double last = 0;
  o.mc.progress = [&](double f) {
    if (f < last) ++part;
    last = f;
    progress.update((part + f) / parts);
  };
  const ConvergenceReport r = convergence(o);
  progress.finish();
  Table t;
  t.columns = {"blocks", "trials", "rel_rms", "rel_rms_expected", "slope", "slope_expected", "pass"};
  for (const auto& pt : r.points)
    t.add_row({std::int64_t{pt.blocks}, std::int64_t{p.mc.trials}, pt.rel_rms, pt.rel_rms_expected, r.slope,
               r.slope_expected, r.pass});
  emit(a.out, render(t, p.format));
  std::cerr << fmt::format("verify convergence: {} (log-log slope of the relative RMS error {:.4f}, Prop 4 predicts {:.4f} "
                           "for this content; pass if within {} of -1/2); spectrum {}, drawn from {}, N = {} per D, seed {}\n",
                           r.pass ? "PASS" : "FAIL", r.slope, r.slope_expected, r.tolerance, r.spectrum, r.draw, p.mc.trials,
                           a.seed);
  if (!r.pass) throw ChecksFailed{};
}

void run_sampling(const VerifyArgs& a, const CliContext& ctx) {
  Prepared p = prepare(a, 20000, "verify sampling");
  const LagShard ls = shard_lags("ropekit verify sampling", a.shard, p.lags, true);
  if (p.draw) throw InputError("ropekit verify sampling: compares sampling schemes of one density (no --draw-from/--power)");
  const Content content = verify_content_of(request_of(a, 20000, "ropekit verify sampling"), "random", p.mc.trials);
  p.lags = ls.lags;
  std::vector<SamplingRow> rows;
  if (p.lags.rows() > 0) {
    check_monte_carlo("ropekit verify sampling", p, static_cast<double>(content.blocks()), 3);
    Progress progress("ropekit verify sampling");
    p.mc.progress = [&](double f) { progress.update(f); };
    rows = compare_sampling(p.spectrum, content, p.lags, p.mc);
    progress.finish();
    ls.restore(rows);
  }
  Table t;
  t.columns = {"lag", "var_iid_expected", "var_iid", "var_antithetic_expected", "var_antithetic", "var_stratified",
               "ratio_antithetic", "ratio_stratified"};
  for (const auto& r : rows) {
    auto ratio = [&](double v) { return r.var_iid > 0 && std::isfinite(v) ? Cell(v / r.var_iid) : Cell(); };
    t.add_row({lag_cell(r.lag), r.var_iid_expected, r.var_iid, r.var_antithetic_expected, r.var_antithetic,
               std::isfinite(r.var_stratified) ? Cell(r.var_stratified) : Cell(), ratio(r.var_antithetic),
               ratio(r.var_stratified)});
  }
  emit(a.out, table_text(t, p.format, ls, ctx));
}

struct ContentArgs {
  std::string encoding, lags, format = "csv", out, shard;
  std::vector<std::string> models;  // --model FILE[:LAYER_TYPE]: the encoding of one layer type
  std::optional<ModelLayer> layer;  // that layer type: the lags its window hides are masked (empty cells)
  double rho = 0.5;
  std::optional<double> assume_rho;
  std::int64_t trials = 20000;
  std::uint64_t seed = kDefaultSeed;
  int threads = 0;
  double alpha = 1e-6;
};

// verify content: the encoding's content mean rho tr G and variance ||G||_F^2 + rho^2 tr G^2 (encodings.md
// section 1) against a Monte Carlo over q, k ~ N(0, I_n), E[q k^T] = rho I.
void run_content(const ContentArgs& a, const CliContext& ctx) {
  const std::string command = "ropekit verify content";
  const Where where = Where::options(command);
  const Format format = parse_format_option(command, a.format);
  const Encoding e = parse_encoding(a.encoding, Where(command + ": --encoding"));
  if (!is_relative(e))
    throw_bad_value(where, "encoding", "'" + a.encoding + "'",
                    fmt::format("a relative encoding: {} is absolute (added to the input), its score is not a function "
                                "of the lag alone; `ropekit check` reports its relativity defect",
                                family_name(e)));
  if (!content_checkable(e))
    throw_bad_value(where, "encoding", "'" + a.encoding + "'",
                    fmt::format("an encoding with an operator: a direct sum with {}-D parts has none yet (check the "
                                "parts one by one)", lag_dims(e)));
  const int k = lag_dims(e);
  if (a.lags.empty() && k > 1)
    throw_bad_value(where, "lags", "none", fmt::format("given for {}: its lags are {}-D vectors, separated by ';' "
                                                       "(e.g. --lags '{}'); there is no default for k > 1",
                                                       a.encoding, k, default_lag_text(k, 4)));
  const std::string lag_spelling = a.lags.empty() ? "0,1,10,100" : a.lags;
  const Eigen::MatrixXd lags = parse_lags(lag_spelling, k, where, "--lags");
  for (Eigen::Index i = 0; i < lags.size(); ++i) check_finite(where, "lags", lags.data()[i]);
  // A lag the layer type's window hides (|lag| >= span, the first component) is masked as `kernel --model` masks
  // it: its row's cells empty, not checked, and not counted in the verdict's checks. Every lag hidden: refused.
  const auto* window = a.layer && a.layer->span ? &*a.layer : nullptr;
  auto hidden = [&](double lag) { return window && std::abs(lag) >= static_cast<double>(*window->span); };
  std::size_t masked = 0;
  for (Eigen::Index i = 0; i < lags.rows(); ++i) masked += hidden(lags(i, 0)) ? 1 : 0;
  if (window && masked == static_cast<std::size_t>(lags.rows()))
    throw_bad_value(where, "lags", "'" + lag_spelling + "'",
                    fmt::format("lags {} sees ({} hides |lag| >= {})", window->label, window->window, *window->span));
  if (!(a.rho >= -1 && a.rho <= 1)) throw_bad_value(where, "rho", format_number(a.rho), "in [-1, 1]");
  if (a.assume_rho && !(*a.assume_rho >= -1 && *a.assume_rho <= 1))
    throw_bad_value(where, "assume_rho", format_number(*a.assume_rho), "in [-1, 1]");
  const std::size_t L = static_cast<std::size_t>(lags.rows()) - masked;  // the lags checked
  // Content is drawn per chunk of trials and each lag's operator applied alone: no lag order matters here.
  const LagShard ls = shard_lags(command, a.shard, lags, false);
  Eigen::MatrixXd seen(ls.lags.rows(), ls.lags.cols());  // the shard's lags the layer type sees
  Eigen::Index n_seen = 0;
  for (Eigen::Index i = 0; i < ls.lags.rows(); ++i)
    if (!hidden(ls.lags(i, 0))) seen.row(n_seen++) = ls.lags.row(i);
  seen.conservativeResize(n_seen, ls.lags.cols());
  if (!(a.alpha > 0 && a.alpha < 1)) throw_bad_value(where, "alpha", format_number(a.alpha), "in (0, 1)");
  if (!(a.alpha >= min_alpha(2 * L)))
    throw_bad_value(where, "alpha", format_number(a.alpha),
                    fmt::format("in [{}, 1) for {} checks (mean and variance at {} lags): alpha / (2 checks) must be a "
                                "normal float64 number, or the normal quantile is not computed",
                                format_number(min_alpha(2 * L)), 2 * L, L));
  ContentVerifyOptions o;
  o.mc.trials = a.trials;
  o.mc.seed = a.seed;
  o.mc.threads = a.threads;
  o.mc.validate(where);
  check_output_path(a.out);  // before the Monte Carlo run, not after it

  // The budget: blame --trials, else --lags (the operators' memory), else the encoding's size n.
  const int n = operator_dim(e);
  const double Ld = static_cast<double>(L);
  auto cost_of = [&](std::int64_t trials, double nn, double lag_count) {
    return content_verify_cost(trials, static_cast<int>(nn), lag_count, a.threads, std::holds_alternative<enc::Nd>(e.value));
  };
  const Cost cost = cost_of(a.trials, n, Ld);
  if (!cost.fits()) {
    const std::string for_what = fmt::format("for n = {} and {} lags", n, L);
    if (cost_of(2, n, Ld).fits())
      check_cost(where, "trials", std::to_string(a.trials), cost,
                 std::to_string(largest_fitting(2, a.trials, [&](std::int64_t t) { return cost_of(t, n, Ld).fits(); })),
                 for_what);
    if (cost_of(2, n, 1).fits())
      check_cost(where, "lags", fmt::format("{} lags", L), cost,
                 fmt::format("{} lags", largest_fitting(1, static_cast<std::int64_t>(L), [&](std::int64_t l) {
                               return cost_of(2, n, static_cast<double>(l)).fits();
                             })),
                 fmt::format("for n = {} with --trials 2", n));
    check_cost(where, "encoding", fmt::format("'{}' (n = {})", a.encoding, n), cost,
               fmt::format("n = {}", largest_fitting(1, n, [&](std::int64_t m) {
                             return cost_of(2, static_cast<double>(m), 1).fits();
                           })),
               "(the size of G) with --trials 2 and one lag");
  }
  if (masked > 0)
    std::cerr << command << ": note: "
              << fmt::format("{}: {} hides |lag| >= {}: {} lag(s) masked (empty cells, null in JSON), not checked",
                             window->label, window->window, *window->span, masked)
              << "\n";
  announce(command, fmt::format("{} trials x {} lags of the {} x {} operator of {}", a.trials, L, n, n, spelling(e)),
           cost.seconds);

  o.encoding = e;
  o.lags = seen;
  o.rho = a.rho;
  o.assumed_rho = a.assume_rho;
  o.alpha = a.alpha;
  o.bonferroni_lags = L;
  ContentVerifyReport r;
  if (o.lags.rows() > 0) {
    Progress progress(command);
    o.mc.progress = [&](double f) { progress.update(f); };
    r = verify_content(o, where);
    progress.finish();
  }

  Table t;
  t.columns = {"lag", "mean_expected", "mean_observed", "z_mean", "var_expected", "var_observed", "z_var", "verdict"};
  // The shard's rows in its lags' order: a masked lag's cells empty, the others the checks' (in the same order).
  std::size_t next = 0;
  for (Eigen::Index i = 0; i < ls.lags.rows(); ++i) {
    if (hidden(ls.lags(i, 0))) {
      const Eigen::VectorXd lag = ls.lags.row(i).transpose();
      t.add_row({lag_cell(std::vector<double>(lag.data(), lag.data() + lag.size())), Cell(), Cell(), Cell(), Cell(),
                 Cell(), Cell(), Cell()});
      continue;
    }
    const auto& l = r.lags.at(next++);
    t.add_row({lag_cell(l.lag), l.mean_expected, l.mean_observed, l.z_mean, l.var_expected, l.var_observed, l.z_var,
               std::string(l.pass() ? "PASS" : "FAIL")});
  }
  emit(a.out, table_text(t, format, ls, ctx));
  if (r.lags.empty()) {
    std::cerr << "verify content" << ls.note() << (ls.lags.rows() > 0 ? ": no lags the layer type sees in this shard\n"
                                                                      : ": no lags in this shard\n");
    return;
  }
  const std::string rho_text =
      a.assume_rho ? fmt::format("rho = {} sampled, expected values at --assume-rho {}", format_number(r.rho),
                                 format_number(r.assumed_rho))
                   : fmt::format("rho = {}", format_number(r.rho));
  std::cerr << fmt::format("verify content{}: {} ({} lags, max |z_mean| = {:.3g}, max |z_var| = {:.3g}, bound {:.3g} = "
                           "two-sided normal at false-alarm rate {:g} per check: {:g} over {} checks (mean and variance "
                           "at each lag), Bonferroni); encoding {}, n = {}, {}, N = {}, seed {}\n",
                           ls.note(), r.pass ? "PASS" : "FAIL", r.lags.size(), r.max_abs_z_mean, r.max_abs_z_var, r.z_critical,
                           r.alpha_per_check, r.alpha, 2 * L, r.encoding, r.dim, rho_text, r.trials, a.seed);
  if (!r.pass) throw ChecksFailed{};
}

// Options every verify subcommand reads; --blocks/--q/--k, --sampling and --alpha only where they are used
// (sampling compares every scheme, convergence judges a slope: an option they would ignore is not offered).
void add_verify_options(CLI::App* c, const std::string& cmd, VerifyArgs& a, const char* trials_default,
                        bool blocks = true, bool sampling = true, bool alpha = true) {
  c->add_option("--spectrum", a.spectrum, "spectral family, e.g. cauchy:b=4 or matern:nu=1.5,l=2,dims=2 (see "
                                          "`ropekit kernel --families`)")->required();
  c->add_option("--draw-from", a.draw_from, "draw frequencies from this density instead (the kernel stays --spectrum's)");
  c->add_flag("--power", a.power, "power check: draw from the reciprocal-scale density (the Cauchy erratum's mistake)");
  if (blocks)
    a.blocks_opt = add_integer_option(c, cmd, "--blocks", a.blocks,
                                      "D, the number of 2-D blocks (head dimension 2D; with --q/--k: their size / 2)",
                                      1, 1 << 20)
                       ->capture_default_str();
  add_integer_option(c, cmd, "--trials", a.trials,
                     std::string("N, independent draws of the D frequencies (default ") + trials_default + "; 1e5 works)",
                     2, std::int64_t{1} << 40);
  c->add_option("--lags", a.lags, std::string(kLagsHelp) + " (default 0,0.5,1,2,4; k-D: origin, axes, diagonal)");
  add_seed_option(c, cmd, "--seed", a.seed, "seed of the frequencies and of drawn content, in [0, 2^64 - 1]")
      ->capture_default_str();
  add_integer_option(c, cmd, "--threads", a.threads, "worker threads (0: all cores); never changes a number", 0,
                     kMaxThreads)
      ->capture_default_str();
  c->add_option("--content", a.content, "random, correlated or aligned content drawn from --seed");
  if (blocks) {
    c->add_option("--q", a.q, "explicit query vector, 2D comma-separated numbers (with --k)");
    c->add_option("--k", a.k, "explicit key vector, 2D comma-separated numbers (with --q)");
  }
  if (sampling) c->add_option("--sampling", a.sampling, "iid, antithetic or stratified (k = 1)")->capture_default_str();
  if (alpha)
    add_real_option(c, cmd, "--alpha", a.alpha, "false-alarm rate of the check over all lags (Bonferroni)")
        ->capture_default_str();
  c->add_option("--format", a.format, "csv, md, json or latex")->capture_default_str();
  c->add_option("--out", a.out, "output file (default: stdout); written only if the run succeeds");
  c->add_option("--shard", a.shard, kShardHelp);
}

}  // namespace

void add_rf_rope_commands(CLI::App& app, const CliContext& ctx) {
  {
    auto a = std::make_shared<KernelArgs>();
    auto* k = app.add_subcommand("kernel", "Print an RF-RoPE spectral kernel (Phi, Phi2, Var[cos], Var[sin]) or any "
                                           "encoding's kernel and content variance at the given lags");
    k->add_option("--spectrum", a->spectrum, "spectral family, e.g. gaussian:sigma=1 or sinc:W=1,2");
    k->add_option("--encoding", a->encodings,
                  "any encoding instead, several side by side (or repeat --encoding), e.g. rope:dim=128,base=1e4 "
                  "xpos:dim=128 (see `ropekit list encodings`)");
    k->add_option("--lags", a->lags, std::string(kLagsHelp) + " (default 0,0.5,1,2,5; k-D: origin, axes, diagonal; "
                                     "--encoding: 0,1,10,100,1000, k-D encodings need --lags)");
    add_real_option(k, "ropekit kernel", "--rho", a->rho,
                    "--encoding: content correlation, E[q k^T] = rho I, in [-1, 1] (default 1)");
    add_real_option(k, "ropekit kernel", "--seq-len", a->seq_len,
                    "--encoding: current sequence length T for dynamic and longrope schemes (default: |Dp| + 1)");
    add_real_option(k, "ropekit kernel", "--position", a->position,
                    "--model: the query position p for a layer type with a query temperature (Llama 4's NoPE layers "
                    "scale the score by s(p), so kernel and content variance include s(p) and s(p)^2); default: |Dp| "
                    "(the query at Dp, the key at 0)");
    k->add_option("--plot", a->plot,
                  "--encoding: also write an SVG figure of the kernels over the lags to this file: a panel per column "
                  "(--plot-columns), each curve's min-max envelope per pixel column and the line through its means");
    auto& po = a->plot_options;
    k->add_option("--plot-columns", po.columns,
                  "--plot's panels, top to bottom (default: kernel content_variance; also expected_kernel, "
                  "frequency_variance, sine_residual, continuum, continuum_sine where the encodings have them)")
        ->delimiter(',');
    k->add_option("--plot-title", po.title, "--plot's title ('' for none; default: the panels' quantities)");
    k->add_option("--plot-size", po.size, "--plot's size WIDTHxHEIGHT in pixels (default: 900 wide, 300 per panel)");
    k->add_option("--plot-x", po.x_scale,
                  "--plot's lag axis: auto (log when the positive lags span more than two decades), linear or log");
    k->add_option("--plot-xrange", po.xrange, "--plot's lag range LO:HI (either may be left out; default: the lags')");
    k->add_option("--plot-yrange", po.yrange,
                  "a panel's y range COLUMN=LO:HI (LO:HI alone with one panel; either end may be left out); values "
                  "beyond it are marked on the frame and noted");
    k->add_option("--plot-log-y", po.log_y, "columns whose panel has a log y axis (values <= 0 are noted, not drawn)")
        ->delimiter(',');
    k->add_option("--plot-labels", po.labels,
                  "--plot's legend labels L1,L2,...: one per curve, distinct (default: the encoding's spelling; "
                  "--model: the file's name and the layer type)")
        ->delimiter(',');
    k->add_option("--plot-line", po.line,
                  "what each curve's line follows through its pixel columns: mean (default), median (exact up to 128 "
                  "points a column, then within a stated rank error) or none (the min-max band only)");
    add_integer_option(k, "ropekit kernel", "--block-rows", a->block_rows, "rows per streamed block (tests)", 1, 1 << 24)
        ->group("");
    k->add_option("--columns", a->columns,
                  "--encoding: these columns only, in this order (C1,C2,...: encoding, lag, kernel, content_variance, "
                  "expected_kernel, frequency_variance, sine_residual, continuum, continuum_sine; --model's rows "
                  "start with layer_type whatever is asked); default: every column")
        ->delimiter(',');
    k->add_flag("--families", a->families, "list the spectral families, their frequencies and kernels");
    k->add_option("--format", a->format, kTableFormatHelp);
    k->add_option("--out", a->out, "output file (default: stdout)");
    auto* model = add_model_option(k, a->models, true);
    model->description(model->get_description() +
                       "; rows then start with a layer_type column, and a lag the layer type's window hides (|Dp| >= W "
                       "of `sliding W`, >= C of `chunked C`) is masked: empty cells (null in JSON), not kernel values");
    k->callback([a] {
      const auto layers = model_layers("ropekit kernel", a->models, true);
      if (!layers.empty()) a->layers.assign(a->encodings.size(), ModelLayer{});  // --encoding's rows: no layer type
      for (const auto& l : layers) {
        a->encodings.push_back(l.encoding);
        a->layers.push_back(l);
      }
      run_kernel(*a);
    });
  }
  auto* verify = app.add_subcommand("verify", "Monte Carlo checks of RF-RoPE's Master Theorem, Prop 4 and convergence, "
                                              "and of an encoding's content moments");
  verify->require_subcommand(1);
  {
    auto a = std::make_shared<VerifyArgs>();
    auto* c = verify->add_subcommand("master", "Theorem 2: E[S] = (q . k) Phi(Dp), z-test per lag");
    add_verify_options(c, "ropekit verify master", *a, "20000");
    c->callback([a, &ctx] { run_verify(*a, false, ctx); });
  }
  {
    const std::string cmd = "ropekit verify content";
    auto a = std::make_shared<ContentArgs>();
    auto* c = verify->add_subcommand("content", "an encoding's content mean rho tr G and variance ||G||_F^2 + rho^2 "
                                                "tr G^2 (q, k ~ N(0, I), E[q k^T] = rho I), z-tests per lag");
    auto* enc = c->add_option("--encoding", a->encoding, "a relative encoding, e.g. rope:dim=64, jordan:m=2,dim=32 or "
                                                         "nd:family=axial,dim=8,axes=2 (spellings: encodings.md section 2)");
    auto* model = add_model_option(c, a->models, false)->excludes(enc);
    model->description(model->get_description() +
                       "; a lag the layer type's window hides is masked (empty cells, null in JSON), not checked");
    c->add_option("--lags", a->lags, std::string(kLagsHelp) + " (default 0,1,10,100; required for k-D encodings)");
    add_real_option(c, cmd, "--rho", a->rho, "content correlation sampled, E[q k^T] = rho I, in [-1, 1]")
        ->capture_default_str();
    add_real_option(c, cmd, "--assume-rho", a->assume_rho,
                    "compute the expected values at this rho instead of --rho (a wrong one must FAIL: the power check)");
    add_integer_option(c, cmd, "--trials", a->trials, "N, independent draws of q and k (1e5 works)", 2,
                       std::int64_t{1} << 40)
        ->capture_default_str();
    add_seed_option(c, cmd, "--seed", a->seed, "seed of the content draws, in [0, 2^64 - 1]")->capture_default_str();
    add_integer_option(c, cmd, "--threads", a->threads, "worker threads (0: all cores); never changes a number", 0,
                       kMaxThreads)
        ->capture_default_str();
    add_real_option(c, cmd, "--alpha", a->alpha,
                    "false-alarm rate of the verdict over all lags' mean and variance checks (Bonferroni)")
        ->capture_default_str();
    c->add_option("--format", a->format, "csv, md, json or latex")->capture_default_str();
    c->add_option("--out", a->out, "output file (default: stdout); written only if the run succeeds");
    c->add_option("--shard", a->shard, kShardHelp);
    c->callback([a, cmd, &ctx] {
      if (!a->models.empty()) {
        std::vector<ModelReference> refs;
        for (const auto& text : a->models) refs.push_back(split_model_reference(text));
        a->layer = one_model_layer(refs, Where::options(cmd));
        a->encoding = a->layer->encoding;
      }
      if (a->encoding.empty()) throw InputError(cmd + ": --encoding = none (must be given, or --model)");
      run_content(*a, ctx);
    });
  }
  {
    auto a = std::make_shared<VerifyArgs>();
    auto* c = verify->add_subcommand("variance", "Proposition 4: Var(S), z-test of the sample variance per lag");
    add_verify_options(c, "ropekit verify variance", *a, "20000");
    c->callback([a, &ctx] { run_verify(*a, true, ctx); });
  }
  {
    auto a = std::make_shared<VerifyArgs>();
    auto* c = verify->add_subcommand("convergence", "relative RMS error over D = 8..1024 and its log-log slope (-1/2)");
    add_verify_options(c, "ropekit verify convergence", *a, "4000", false, true, false);
    c->add_option("--blocks-list", a->blocks_list, "block counts D (default 8,16,...,1024)");
    c->callback([a] { run_convergence(*a); });
  }
  {
    auto a = std::make_shared<VerifyArgs>();
    auto* c = verify->add_subcommand("sampling", "variance of i.i.d., antithetic and stratified draws, side by side");
    add_verify_options(c, "ropekit verify sampling", *a, "20000", true, false, false);
    c->callback([a, &ctx] { run_sampling(*a, ctx); });
  }
}

}  // namespace ropekit
