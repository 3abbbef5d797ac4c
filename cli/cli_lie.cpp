// ropekit lie build | check | kernel and ropekit jordan positionwise: N-D RoPE generators and
// position-wise Jordan-RoPE (spec nd-rope.md).
#include <cmath>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "reports/lie_check_report.hpp"
#include "reports/positionwise_table.hpp"
#include "reports/output.hpp"
#include "reports/progress.hpp"
#include "reports/table.hpp"
#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/lie/generator_io.hpp"
#include "ropekit/lie/jordan_positionwise.hpp"
#include "ropekit/lie/lie.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/version.hpp"

namespace ropekit {

namespace {

struct BuildArgs {
  std::string family, freqs, mix, out;
  int dim = 64, axes = 2;
  double base = 1e4, scale = 1.0;
  std::uint64_t seed = 1;
  CLI::Option *base_opt = nullptr, *seed_opt = nullptr, *scale_opt = nullptr, *freqs_opt = nullptr;
};

struct CheckArgs {
  std::string file, format = "json", out, route = "auto";
  LieCheckOptions options;
};

struct KernelArgs {
  std::string file, offsets = "0:17", format = "csv", out, route = "auto";
};

struct PositionwiseArgs {
  PositionwiseParams params;
  PositionwiseOptions options;
  std::optional<double> gamma;
  std::string center = "mid", format = "md", out;
  std::vector<std::pair<std::string, CLI::Option*>> range_options;  ///< omega, gamma, c, eta, window, center
};

void refuse(const CLI::Option* opt, const std::string& family, const std::string& applies_to) {
  if (opt && opt->count() > 0)
    throw InputError(fmt::format("ropekit lie build {}: {} = given (must be omitted: it applies to {} only)", family,
                                 opt->get_name(), applies_to));
}

void run_build(const BuildArgs& a, const CliContext& ctx) {
  const std::string command = "ropekit lie build " + a.family;
  const Where where = Where::options(command);
  GeneratorFamily family;
  if (a.family == "axial") {
    refuse(a.scale_opt, a.family, "random");
    refuse(a.freqs_opt, a.family, "torus");
    if (a.mix.empty()) refuse(a.seed_opt, a.family, "mixed, torus, random and --mix");
    family = gen::Axial{a.dim, a.axes, a.base};
  } else if (a.family == "mixed") {
    refuse(a.scale_opt, a.family, "random");
    refuse(a.freqs_opt, a.family, "torus");
    family = gen::Mixed{a.dim, a.axes, a.base, a.seed};
  } else if (a.family == "torus") {
    refuse(a.scale_opt, a.family, "random");
    if (a.dim < 2 || a.dim % 2 != 0 || a.dim > kMaxLieDim)
      throw_bad_value(where, "dim", std::to_string(a.dim),
                      fmt::format("a positive even integer <= {}; a torus needs 2x2 planes", kMaxLieDim));
    check_at_least(where, "axes", a.axes, 1);
    if (static_cast<double>(a.axes) * a.dim * a.dim > kMaxGeneratorEntries)
      throw_bad_value(where, "axes", std::to_string(a.axes),
                      fmt::format("<= {} for --dim {}: axes * dim^2 numbers at most {}",
                                  static_cast<long long>(kMaxGeneratorEntries) / (static_cast<long long>(a.dim) * a.dim),
                                  a.dim, static_cast<long long>(kMaxGeneratorEntries)));
    check_positive(where, "base", a.base);
    if (a.freqs_opt->count() > 0) {  // --base and --seed only shape the default frequencies (and --seed the mixing)
      refuse(a.base_opt, a.family, "torus without --freqs");
      if (a.mix.empty()) refuse(a.seed_opt, a.family, "torus without --freqs, and --mix");
    }
    const int planes = a.dim / 2;
    Eigen::MatrixXd W(a.axes, planes);
    if (a.freqs_opt->count() > 0) {  // given, even empty: parsed (an empty list is refused)
      const auto v = parse_number_list(a.freqs, where, "--freqs", 1u << 24);
      if (v.size() != static_cast<std::size_t>(a.axes) * planes)
        throw_bad_value(where, "freqs", fmt::format("{} values", v.size()),
                        fmt::format("axes * dim/2 = {} values, row-major: axis 0's planes first",
                                    static_cast<long long>(a.axes) * planes));
      for (int i = 0; i < a.axes; ++i)
        for (int b = 0; b < planes; ++b) W(i, b) = v[static_cast<std::size_t>(i) * planes + b];
    } else {
      W = random_torus_frequencies(a.axes, a.dim, a.base, a.seed, where);
    }
    family = gen::Torus{W};
  } else if (a.family == "random") {
    refuse(a.base_opt, a.family, "axial, mixed and torus");
    refuse(a.freqs_opt, a.family, "torus");
    family = gen::Random{a.dim, a.axes, a.scale, a.seed};
  } else {
    throw_bad_value("ropekit lie build", "family", "'" + a.family + "'", "axial, mixed, torus or random");
  }
  const MixingKind kind = a.mix.empty() ? MixingKind::cayley : parse_mixing_kind(a.mix, where);
  // Writing N n^2 numbers (and Q) as shortest round-trip text: about 1e6 numbers per second, conservatively.
  const double numbers = (static_cast<double>(a.axes) + (a.mix.empty() ? 0 : 1)) * a.dim * a.dim;
  announce(command, fmt::format("{} numbers of {} x {} matrices", numbers, a.dim, a.dim), numbers / 1e6);
  GeneratorSet set = generators(family, where);
  Provenance prov = {{"ropekit", kVersion}, {"command", ctx.command}, {"family", a.family}};
  if (!a.mix.empty()) {
    set.mixing = orthogonal(random_mixing(kind, set.dim, a.seed));
    set.description += fmt::format("; mixed by Q = {} (seed {})", kind == MixingKind::cayley ? "(I - S)(I + S)^-1"
                                                                  : kind == MixingKind::exp ? "exp(S)"
                                                                                            : "a Givens product",
                                   a.seed);
    prov.emplace_back("mix", to_string(kind));
  }
  emit(a.out, to_generator_json(set, prov));
}

void run_check(const CheckArgs& a) {
  const std::string command = "ropekit lie check";
  Where where = Where::options(command);
  where.rename("generators", "generators of '" + a.file + "'");
  const Format format = parse_format_option(command, a.format);
  if (format != Format::json && format != Format::md)
    throw_bad_value(command, "--format", "'" + a.format + "'", "json or md");
  LieCheckOptions o = a.options;
  o.route = parse_route_option(command, a.route);
  o.validate(where);
  const GeneratorSet set = load_generator_file(a.file);
  check_lie_inputs(set, o, where);  // refusals before the notice
  check_output_path(a.out);         // refuse a bad --out before the work, not after it
  const Cost cost = lie_check_cost(set, o);
  announce(command, fmt::format("{} generators of {} x {}, window {}^{}, {} relativity pairs", set.axes(), set.dim,
                                set.dim, o.window, set.axes(), o.pairs),
           cost.seconds);
  Progress progress(command);
  o.progress = [&](double f) { progress.update(f); };
  const LieCheck c = check(set, o, where);
  progress.finish();
  emit(a.out, format == Format::json ? lie_check_json(c, a.file) : lie_check_markdown(c, a.file));
}

void run_kernel(const KernelArgs& a) {
  const std::string command = "ropekit lie kernel";
  Where where = Where::options(command);
  where.rename("generators", "generators of '" + a.file + "'");
  const Format format = parse_format_option(command, a.format);
  const Route route = parse_route_option(command, a.route);
  const auto list = parse_number_list(a.offsets, where, "--offsets", 1u << 16);
  const GeneratorSet set = load_generator_file(a.file);
  check_output_path(a.out);  // refuse a bad --out before the work, not after it
  const int N = set.axes();
  const double rows = std::pow(static_cast<double>(list.size()), N);
  if (rows > (1 << 16))
    throw_bad_value(where, "offsets", fmt::format("{} values on {} axes", list.size(), N),
                    fmt::format("at most 65536 grid rows: {}^{} = {} rows", list.size(), N, format_number(rows)));
  double max_offset = 0;
  for (double v : list) max_offset = std::max(max_offset, std::fabs(v));
  const Cost cost = induced_kernel_cost(set, rows, max_offset * N, route);
  check_cost(where, "offsets", fmt::format("{} grid rows", rows), cost,
             fmt::format("{} grid rows", static_cast<long long>(rows * kMaxRunSeconds / std::max(cost.seconds, 1e-9))),
             fmt::format("for n = {}", set.dim));
  Eigen::MatrixXd offsets(static_cast<Eigen::Index>(rows), N);
  std::vector<std::size_t> idx(N, 0);
  for (Eigen::Index r = 0; r < offsets.rows(); ++r) {
    for (int i = 0; i < N; ++i) offsets(r, i) = list[idx[i]];
    for (int k = N - 1; k >= 0 && ++idx[k] == list.size(); --k) idx[k] = 0;
  }
  check_offsets(set, offsets, route, where);  // refusals before the notice
  announce(command, fmt::format("{} offsets, n = {}", rows, set.dim), cost.seconds);
  const Eigen::VectorXd phi = induced_kernel(set, offsets, route, where);
  Table t;
  for (int i = 0; i < N; ++i) t.columns.push_back(fmt::format("dx{}", i));
  t.columns.push_back("phi");
  for (Eigen::Index r = 0; r < offsets.rows(); ++r) {
    std::vector<Cell> row;
    for (int i = 0; i < N; ++i) {
      const double v = offsets(r, i);
      row.push_back(v == std::round(v) && std::fabs(v) < 1e15 ? Cell{static_cast<std::int64_t>(v)} : Cell{v});
    }
    row.push_back(phi[r]);
    t.add_row(std::move(row));
  }
  emit(a.out, render(t, format));
}

// Explicitly given options first: the range check blames the first one whose reduction helps.
std::vector<std::string> blame_order(const PositionwiseArgs& a) {
  std::vector<std::string> given, rest;
  for (const auto& [name, opt] : a.range_options) (opt->count() ? given : rest).push_back(name);
  given.insert(given.end(), rest.begin(), rest.end());
  return given;
}

void run_positionwise(const PositionwiseArgs& a) {
  const std::string command = "ropekit jordan positionwise";
  const Where where = Where::options(command);
  const Format format = parse_format_option(command, a.format);
  PositionwiseParams p = a.params;
  p.gamma = a.gamma;
  PositionwiseOptions o = a.options;
  if (a.center != "mid") {
    const auto c = parse_double(a.center);
    if (!c || !std::isfinite(*c)) throw_bad_value(where, "center", "'" + a.center + "'", "mid or a finite number");
    o.center = *c;
  }
  p.validate(where);
  o.validate(where);
  check_positionwise_range(p, o, where, blame_order(a));
  const Cost cost = positionwise_cost(p, o);
  if (!cost.fits()) {
    auto fits_with = [&](int samples) {
      PositionwiseOptions u = o;
      u.samples = samples;
      return positionwise_cost(p, u).fits();
    };
    if (fits_with(2))
      check_cost(where, "samples", std::to_string(o.samples), cost,
                 std::to_string(largest_fitting(2, o.samples, [&](std::int64_t v) { return fits_with(static_cast<int>(v)); })),
                 fmt::format("for --m {} and --window {}", p.m, o.window));
    check_cost(where, "window", std::to_string(o.window), cost, "smaller", fmt::format("for --m {}", p.m));
  }
  announce(command, fmt::format("m = {}, window {}, {} sampled positions, 6 variants", p.m, o.window, o.samples),
           cost.seconds);
  Progress progress(command);
  std::vector<PositionwiseRow> rows;
  for (JordanVariant v : {JordanVariant::raw, JordanVariant::scaled, JordanVariant::stabilized})
    for (Factorization f : {Factorization::plain, Factorization::centred}) {
      rows.push_back(measure_positionwise(p, v, f, o));
      progress.update(rows.size() / 6.0);
    }
  progress.finish();
  emit(a.out, render(positionwise_table(rows), format));
}

}  // namespace

void add_lie_commands(CLI::App& app, const CliContext& ctx) {
  auto* lie = app.add_subcommand("lie", "N-D RoPE generators in so(n): build them, check relativity and reversibility");
  lie->require_subcommand(1);
  {
    auto a = std::make_shared<BuildArgs>();
    const std::string cmd = "ropekit lie build";
    auto* b = lie->add_subcommand("build", "Write a generator file (JSON) for axial, mixed, torus or random generators");
    b->add_option("family", a->family, "axial, mixed (Heo et al.), torus (given frequencies) or random (LieRE-style)")
        ->required();
    add_integer_option(b, cmd, "--dim", a->dim, "head dimension n", 1, kMaxLieDim)->capture_default_str();
    add_integer_option(b, cmd, "--axes", a->axes, "number of position axes N", 1, static_cast<std::int64_t>(kMaxGeneratorEntries))
        ->capture_default_str();
    a->base_opt = add_real_option(b, cmd, "--base", a->base, "RoPE base (axial, mixed; torus default frequencies)")
                      ->capture_default_str();
    a->seed_opt = add_seed_option(b, cmd, "--seed", a->seed, "seed (mixed, torus default frequencies, random, --mix)")
                      ->capture_default_str();
    a->scale_opt = add_real_option(b, cmd, "--scale", a->scale, "random: generator scale")->capture_default_str();
    a->freqs_opt = b->add_option("--freqs", a->freqs, "torus: N * n/2 frequencies, row-major (axis 0's planes first)");
    b->add_option("--mix", a->mix, "orthogonal mixing Q: cayley, exp or givens (random parameters from --seed)");
    b->add_option("--out", a->out, "output file (default: stdout); written only if the build succeeds");
    b->callback([a, &ctx] { run_build(*a, ctx); });
  }
  {
    auto a = std::make_shared<CheckArgs>();
    const std::string cmd = "ropekit lie check";
    auto* c = lie->add_subcommand("check", "Check skew, commuting, independent, relativity and reversibility");
    c->add_option("file", a->file, "generator file (JSON, see README)")->required();
    add_integer_option(c, cmd, "--window", a->options.window, "positions 0..W-1 on every axis", 2, 1 << 24)
        ->capture_default_str();
    add_integer_option(c, cmd, "--pairs", a->options.pairs, "sampled position pairs for the relativity defect", 1,
                       1 << 20)
        ->capture_default_str();
    add_integer_option(c, cmd, "--max-exp", a->options.max_exp,
                       "matrix exponentials at most in the reversibility scan", 1, std::int64_t{1} << 40)
        ->capture_default_str();
    c->add_option("--route", a->route, "auto, closed-form or matrix-exp")->capture_default_str();
    c->add_option("--format", a->format, "json or md")->capture_default_str();
    c->add_option("--out", a->out, "output file (default: stdout)");
    c->callback([a] { run_check(*a); });
  }
  {
    auto a = std::make_shared<KernelArgs>();
    auto* k = lie->add_subcommand("kernel", "Induced kernel Phi(dx) = tr R(dx) / n on a grid of offsets");
    k->add_option("file", a->file, "generator file (JSON)")->required();
    k->add_option("--offsets", a->offsets, "offsets per axis (list or start:stop[:step]); the grid is their product")
        ->capture_default_str();
    k->add_option("--route", a->route, "auto, closed-form or matrix-exp")->capture_default_str();
    k->add_option("--format", a->format, "csv, md, json or latex")->capture_default_str();
    k->add_option("--out", a->out, "output file (default: stdout)");
    k->callback([a] { run_kernel(*a); });
  }

  auto* jordan = app.add_subcommand("jordan", "Jordan-RoPE blocks");
  jordan->require_subcommand(1);
  {
    auto a = std::make_shared<PositionwiseArgs>();
    const std::string cmd = "ropekit jordan positionwise";
    auto* p = jordan->add_subcommand(
        "positionwise", "Position-wise factorization: dynamic range, relativity defect and float32 score error, "
                        "one row per variant (raw, scaled, stabilized) and factorization (plain, centred)");
    add_integer_option(p, cmd, "--m", a->params.m, "Jordan order m", 1, kMaxJordanOrder)->capture_default_str();
    auto* c = add_real_option(p, cmd, "--c", a->params.c, "scaled damping c (gamma = c/L)")->capture_default_str();
    auto* eta = add_real_option(p, cmd, "--eta", a->params.eta, "nilpotent amplitude eta (scaled: eta/L)")
                    ->capture_default_str();
    auto* gamma = add_real_option(p, cmd, "--gamma", a->gamma, "raw and stabilized damping (default c/L)");
    auto* omega = add_real_option(p, cmd, "--omega", a->params.omega, "rotary frequency")->capture_default_str();
    add_integer_option(p, cmd, "--train-context", a->params.train_context, "L", 1, INT32_MAX)->capture_default_str();
    auto* window = add_integer_option(p, cmd, "--window", a->options.window, "positions 0..W-1", 2, 1 << 24)
                       ->capture_default_str();
    auto* center = p->add_option("--center", a->center, "c0 of the centred factorization: mid = (W-1)/2, or a number")
                       ->capture_default_str();
    add_integer_option(p, cmd, "--samples", a->options.samples, "sampled positions (evenly spaced, both ends)", 2, 4097)
        ->capture_default_str();
    p->add_option("--format", a->format, "md, csv, json or latex")->capture_default_str();
    p->add_option("--out", a->out, "output file (default: stdout)");
    a->range_options = {{"omega", omega}, {"gamma", gamma}, {"c", c}, {"eta", eta}, {"window", window}, {"center", center}};
    p->callback([a] { run_positionwise(*a); });
  }
}

}  // namespace ropekit
