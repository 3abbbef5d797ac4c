// ropekit lie build | check | kernel and ropekit jordan positionwise: N-D RoPE generators and
// position-wise Jordan-RoPE (spec nd-rope.md).
#include <cmath>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "probes/cli.hpp"
#include "probes/jordan_positionwise_probe.hpp"
#include "probes/nd_rope_probe.hpp"
#include "reports/output.hpp"
#include "reports/table.hpp"
#include "ropekit/error.hpp"
#include "ropekit/generator_io.hpp"
#include "ropekit/lie.hpp"
#include "ropekit/spelling.hpp"
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
};

Route parse_route(const std::string& s) {
  if (s == "auto") return Route::automatic;
  if (s == "closed-form") return Route::closed_form;
  if (s == "matrix-exp") return Route::matrix_exp;
  throw_bad_value("ropekit lie", "--route", "'" + s + "'", "auto, closed-form or matrix-exp");
}

void refuse(const CLI::Option* opt, const std::string& family, const std::string& applies_to) {
  if (opt && opt->count() > 0)
    throw InputError(fmt::format("ropekit lie build {}: {} = given (must be omitted: it applies to {} only)", family,
                                 opt->get_name(), applies_to));
}

void run_build(const BuildArgs& a, const CliContext& ctx) {
  const std::string where = "ropekit lie build " + a.family;
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
      throw_bad_value(where, "--dim", std::to_string(a.dim),
                      fmt::format("a positive even integer <= {}; a torus needs 2x2 planes", kMaxLieDim));
    check_at_least(where, "--axes", a.axes, 1);
    check_positive(where, "--base", a.base);
    const int planes = a.dim / 2;
    Eigen::MatrixXd W(a.axes, planes);
    if (!a.freqs.empty()) {
      const auto v = parse_number_list(a.freqs, "--freqs", 1u << 24);
      if (v.size() != static_cast<std::size_t>(a.axes) * planes)
        throw_bad_value(where, "--freqs", fmt::format("{} values", v.size()),
                        fmt::format("axes * dim/2 = {} values, row-major: axis 0's planes first",
                                    static_cast<long long>(a.axes) * planes));
      for (int i = 0; i < a.axes; ++i)
        for (int b = 0; b < planes; ++b) W(i, b) = v[static_cast<std::size_t>(i) * planes + b];
    } else {
      W = random_torus_frequencies(a.axes, a.dim, a.base, a.seed);
    }
    family = gen::Torus{W};
  } else if (a.family == "random") {
    refuse(a.base_opt, a.family, "axial, mixed and torus");
    refuse(a.freqs_opt, a.family, "torus");
    family = gen::Random{a.dim, a.axes, a.scale, a.seed};
  } else {
    throw_bad_value("ropekit lie build", "family", "'" + a.family + "'", "axial, mixed, torus or random");
  }
  GeneratorSet set = generators(family);
  Provenance prov = {{"ropekit", kVersion}, {"command", ctx.command}, {"family", a.family}};
  if (!a.mix.empty()) {
    const MixingKind kind = parse_mixing_kind(a.mix);
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
  const Format format = parse_format(a.format);
  if (format != Format::json && format != Format::md)
    throw_bad_value("ropekit lie check", "--format", a.format, "json or md");
  LieCheckOptions o = a.options;
  o.route = parse_route(a.route);
  const GeneratorSet set = load_generator_file(a.file);
  check_output_path(a.out);  // refuse a bad --out before the work, not after it
  const LieCheck c = check(set, o);
  emit(a.out, format == Format::json ? lie_check_json(c, a.file) : lie_check_markdown(c, a.file));
}

void run_kernel(const KernelArgs& a) {
  const Format format = parse_format(a.format);
  const Route route = parse_route(a.route);
  const GeneratorSet set = load_generator_file(a.file);
  check_output_path(a.out);  // refuse a bad --out before the work, not after it
  const auto list = parse_number_list(a.offsets, "--offsets", 1u << 16);
  const int N = set.axes();
  const double rows = std::pow(static_cast<double>(list.size()), N);
  if (rows > (1 << 16))
    throw_bad_value("ropekit lie kernel", "offset grid", fmt::format("{}^{} rows", list.size(), N), "<= 65536 rows");
  Eigen::MatrixXd offsets(static_cast<Eigen::Index>(rows), N);
  std::vector<std::size_t> idx(N, 0);
  for (Eigen::Index r = 0; r < offsets.rows(); ++r) {
    for (int i = 0; i < N; ++i) offsets(r, i) = list[idx[i]];
    for (int k = N - 1; k >= 0 && ++idx[k] == list.size(); --k) idx[k] = 0;
  }
  const Eigen::VectorXd phi = induced_kernel(set, offsets, route);
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

void run_positionwise(const PositionwiseArgs& a) {
  const Format format = parse_format(a.format);
  PositionwiseParams p = a.params;
  p.gamma = a.gamma;
  PositionwiseOptions o = a.options;
  if (a.center != "mid") {
    const auto c = parse_double(a.center);
    if (!c) throw_bad_value("ropekit jordan positionwise", "--center", "'" + a.center + "'", "mid or a finite number");
    o.center = *c;
  }
  p.validate();
  o.validate();
  emit(a.out, render(positionwise_table(measure_positionwise_all(p, o)), format));
}

}  // namespace

void add_lie_commands(CLI::App& app, const CliContext& ctx) {
  auto* lie = app.add_subcommand("lie", "N-D RoPE generators in so(n): build them, check relativity and reversibility");
  lie->require_subcommand(1);
  {
    auto a = std::make_shared<BuildArgs>();
    auto* b = lie->add_subcommand("build", "Write a generator file (JSON) for axial, mixed, torus or random generators");
    b->add_option("family", a->family, "axial, mixed (Heo et al.), torus (given frequencies) or random (LieRE-style)")
        ->required();
    b->add_option("--dim", a->dim, "head dimension n")->capture_default_str();
    b->add_option("--axes", a->axes, "number of position axes N")->capture_default_str();
    a->base_opt = b->add_option("--base", a->base, "RoPE base (axial, mixed; torus default frequencies)")
                      ->capture_default_str();
    a->seed_opt = b->add_option("--seed", a->seed, "seed (mixed, torus default frequencies, random, --mix)")
                      ->capture_default_str();
    a->scale_opt = b->add_option("--scale", a->scale, "random: generator scale")->capture_default_str();
    a->freqs_opt = b->add_option("--freqs", a->freqs, "torus: N * n/2 frequencies, row-major (axis 0's planes first)");
    b->add_option("--mix", a->mix, "orthogonal mixing Q: cayley, exp or givens (random parameters from --seed)");
    b->add_option("--out", a->out, "output file (default: stdout); written only if the build succeeds");
    b->callback([a, &ctx] { run_build(*a, ctx); });
  }
  {
    auto a = std::make_shared<CheckArgs>();
    auto* c = lie->add_subcommand("check", "Check skew, commuting, independent, relativity and reversibility");
    c->add_option("file", a->file, "generator file (JSON, see README)")->required();
    c->add_option("--window", a->options.window, "positions 0..W-1 on every axis")->capture_default_str();
    c->add_option("--pairs", a->options.pairs, "sampled position pairs for the relativity defect")->capture_default_str();
    c->add_option("--max-exp", a->options.max_exp, "matrix exponentials at most in the reversibility scan")
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
    auto* p = jordan->add_subcommand(
        "positionwise", "Position-wise factorization: dynamic range, relativity defect and float32 score error, "
                        "one row per variant (raw, scaled, stabilized) and factorization (plain, centred)");
    p->add_option("--m", a->params.m, "Jordan order m")->capture_default_str();
    p->add_option("--c", a->params.c, "scaled damping c (gamma = c/L)")->capture_default_str();
    p->add_option("--eta", a->params.eta, "nilpotent amplitude eta (scaled: eta/L)")->capture_default_str();
    p->add_option("--gamma", a->gamma, "raw and stabilized damping (default c/L)");
    p->add_option("--omega", a->params.omega, "rotary frequency")->capture_default_str();
    p->add_option("--train-context", a->params.train_context, "L")->capture_default_str();
    p->add_option("--window", a->options.window, "positions 0..W-1")->capture_default_str();
    p->add_option("--center", a->center, "c0 of the centred factorization: mid = (W-1)/2, or a number")
        ->capture_default_str();
    p->add_option("--samples", a->options.samples, "sampled positions (evenly spaced, both ends)")->capture_default_str();
    p->add_option("--format", a->format, "md, csv, json or latex")->capture_default_str();
    p->add_option("--out", a->out, "output file (default: stdout)");
    p->callback([a] { run_positionwise(*a); });
  }
}

}  // namespace ropekit
