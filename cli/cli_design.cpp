// ropekit design: inverse design of RF-RoPE frequencies from a target kernel (RF-RoPE Corollary 3, Bochner).
// Three inputs, one report:
//   a 1-D spectral family:  the closed-form density, PD by construction; frequencies drawn by the library's rf-rope
//                           sampler, so the tuned encoding is that rf-rope spelling;
//   kernel:ENCODING:        Phi = kernel(e, lags) on an even lag grid --lags;
//   data:FILE.csv:          a lag,value table on an even grid.
// kernel: of rope, rope-matched or 1-D rf-rope (the lines route, the default): Phi is a finite sum of cosines with
// non-negative weights, its Bochner measure the atoms (spectral/design.hpp, line_spectrum), checked against
// kernel(e, lags) to rounding; the D frequencies come from the atoms' discrete CDF, and the atoms' signs are the
// certificate. Otherwise (the table route; --spectrum-route table forces it) the density is the transform of Phi's
// piecewise-linear interpolant, certified (or refuted) positive definite by its Fejer-tapered twin, and the D
// frequencies come from |w|'s distribution. Either way the tuned encoding is rope:freqs=[...]. The report compares the realised kernel (1/D) sum cos(w_i Dp) with Phi and gives
// Prop 4's variance of the design. Exit code 3 (after writing everything) when Phi is not positive definite.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "reports/frequency_export.hpp"
#include "targets/kernel_table.hpp"
#include "reports/output.hpp"
#include "reports/progress.hpp"
#include "reports/table.hpp"
#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/spectral/design.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "ropekit/version.hpp"

namespace ropekit {

namespace {

using ordered_json = nlohmann::ordered_json;

const std::string kCommand = "ropekit design";
// Lags 0, 1, ..., 4096 (parse_lags ranges exclude their stop).
const std::string kDefaultLags = "0:4097";
// Rows printed by md and csv (evenly spaced, first and last kept); json prints every row up to kJsonRows.
constexpr std::size_t kTextRows = 200, kJsonRows = 20000;
// Frequencies listed in md (json and --export have all of them).
constexpr int kMarkdownFrequencies = 64;
// Hard cap on the cosine terms of the density (N M) and of the realised kernel (lags x D).
constexpr double kMaxTerms = 1e10;
// Measured ~1 ns per density term (a table look-up, two multiply-adds) and ~10 ns per cos on one core; the rates
// below are 5x slower, as budget.hpp's (bounds for refusing, not predictions).
constexpr double kDensityTermsPerSecond = 2e8;
constexpr double kCosinesPerSecond = 2e7;
// Midpoint nodes in u of the antithetic variance (design.hpp).
constexpr int kAntitheticNodes = 8192;
// Two-sided mass of a spectral family's density left beyond the default w_max.
constexpr double kFamilyTailMass = 1e-6;
// Lags beyond this have 2 Dp (Prop 4's Phi2 argument) outside float64.
constexpr double kMaxLag = 0x1p1022;

struct DesignArgs {
  std::string kernel, sampling = "quantile", taper = "none", lags, format = "md", out, export_path;
  std::string spectrum_route;  // "" (lines when the kernel: encoding has a line spectrum), "lines" or "table"
  int blocks = 0;
  std::uint64_t seed = kDefaultSeed;
  std::int64_t wpoints = 0;
  std::optional<double> wmax, tolerance;
  CLI::Option* seed_opt = nullptr;
};

enum class Source { family, encoding, data };

// Everything the report shows, whatever the input.
struct Design {
  Source source = Source::family;
  DensityEstimate est;            // density grid, densities and certificate (families: p only, PD, no mass;
                                  // lines: PD, no mass, tolerance 0, w_max the largest atom, integral the mass sum)
  Eigen::VectorXd p_closed_form;  // families only
  std::string route;              // "lines" or "table" (kernel: and data:), "closed form" (families)
  std::string route_reason;       // kernel: on the table route: why not lines
  std::optional<LineSpectrum> lines;
  double line_residual = NAN;     // lines: max |sum m_i cos(w_i Dp) - kernel(e, Dp)| over the lags
  double odd_at = NAN;            // kernel: a lag where Phi(-Dp) != Phi(Dp) (not even: not positive definite)
  std::pair<double, double> odd_values{NAN, NAN};  // Phi(Dp), Phi(-Dp) there
  double step = NAN;              // tables only: h
  bool fejer = false;             // frequencies drawn from p_F instead of max(p, 0)
  Eigen::VectorXd freqs;
  std::string tuned;
  Eigen::VectorXd lags, target, realised, variance, variance_iid;
  double max_abs = 0, rms = 0;
};

// A library message re-thrown with the command's name and the --kernel value in front.
[[noreturn]] void bad_kernel(const std::string& text, const std::string& why) {
  throw_bad_value(Where::options(kCommand), "kernel", "'" + text + "'", why);
}

// Sizes the work and memory before anything runs; refuses with the usual one-line message.
void check_budget(const Where& where, const std::string& name, const std::string& value, double density_terms,
                  double density_bytes, double lags, int blocks, bool antithetic_numeric, double extra_seconds) {
  const double cos_terms = lags * blocks + (antithetic_numeric ? lags * kAntitheticNodes : 0);
  if (density_terms > kMaxTerms)
    throw_bad_value(where, name, value,
                    fmt::format("at most {} cosine terms N M for the density (N lags x M points = {}): fewer lags, a "
                                "coarser step or a smaller --wpoints",
                                format_number(kMaxTerms), format_number(density_terms)));
  if (lags * blocks > kMaxTerms)
    throw_bad_value(where, "blocks", std::to_string(blocks),
                    fmt::format("at most {} realised-kernel cosines (lags x blocks = {}): fewer lags or blocks",
                                format_number(kMaxTerms), format_number(lags * blocks)));
  const int threads = std::max(1, default_threads());
  Cost c;
  // Density arrays and the cosine table; frequencies and their spelling (~25 bytes each); rows; the text written
  // (json: every density point and frequency, up to kJsonRows rows, ~30 bytes a number).
  c.bytes = density_bytes + 40.0 * blocks + 8 * 6 * lags + 30 * (3 * density_bytes / 48 + 2.0 * blocks + 6 * lags);
  c.seconds = density_terms / kDensityTermsPerSecond / threads + cos_terms / kCosinesPerSecond / threads + extra_seconds;
  if (!c.fits())
    check_cost(where, name, value, c, "a smaller request", fmt::format("for {} blocks", blocks));
  announce(kCommand, fmt::format("{} density terms, {} realised-kernel cosines", format_number(density_terms),
                                 format_number(cos_terms)),
           c.seconds);
}

// An even lag grid x_k = k h from 0 (kernel:ENCODING's --lags); refuses anything else.
double even_step(const Where& where, const std::string& text, const Eigen::VectorXd& x) {
  const auto n = x.size();
  auto bad = [&](const std::string& why) { throw_bad_value(where, "lags", "'" + text + "'", why); };
  if (n < 2) bad("at least 2 lags (0 and the step h) for kernel:ENCODING");
  if (x[0] != 0) bad("an even grid from 0 (start:stop:step with start 0; stop is excluded)");
  const double h = x[n - 1] / static_cast<double>(n - 1);
  if (!(h > 0)) bad("an increasing even grid from 0");
  for (Eigen::Index k = 0; k < n; ++k)
    if (!(std::fabs(x[k] - static_cast<double>(k) * h) <= kEvenGridTolerance * x[n - 1]))
      bad(fmt::format("an even grid k h (lag {} is {}, k h = {})", k, format_number(x[k]),
                      format_number(static_cast<double>(k) * h)));
  return h;
}

// The tuned encoding, rope:freqs=[...], and the rows of a table or lines design from its frequencies: lags k h,
// target Phi_k, realised kernel, Prop 4's variance (quantile 0, iid from Phi and Phi(2 Dp), antithetic by `anti`).
template <class Antithetic>
void design_rows(Design& d, const KernelGrid& t, const Eigen::VectorXd& phi2, const DesignArgs& a,
                 DesignSampling sampling, Antithetic&& anti) {
  ExplicitFrequencies x;
  x.values.assign(d.freqs.data(), d.freqs.data() + d.freqs.size());
  d.tuned = spelling(Encoding{enc::Rope{FrequencySchedule{x, scaling::None{}}}});
  const Eigen::Index N = t.phi.size();
  d.step = t.step;
  d.lags.resize(N);
  for (Eigen::Index k = 0; k < N; ++k) d.lags[k] = t.step * static_cast<double>(k);
  d.target = t.phi;
  d.realised = realised_kernel(d.freqs, d.lags);
  d.variance_iid.resize(N);
  for (Eigen::Index k = 0; k < N; ++k) d.variance_iid[k] = iid_design_variance(t.phi[k], phi2[k], a.blocks);
  if (sampling == DesignSampling::quantile) d.variance = Eigen::VectorXd::Zero(N);
  else if (sampling == DesignSampling::iid) d.variance = d.variance_iid;
  else d.variance = anti();
}

// The density, certificate, frequencies and rows of a table input (kernel:ENCODING or data:).
void design_from_table(Design& d, const KernelGrid& t, const Eigen::VectorXd& phi2, const DesignArgs& a,
                       DesignSampling sampling) {
  const std::int64_t M = a.wpoints ? a.wpoints : default_density_points(t.phi.size());
  const DensityEstimate e = estimate_density(t, M, a.tolerance.value_or(-1.0), 0, kCommand);
  d.route = "table";
  d.est = e;
  d.fejer = a.taper == "fejer";
  const MagnitudeDistribution dist = magnitude_distribution(e.w, d.fejer ? e.p_fejer : e.p);
  d.freqs = design_frequencies(dist, a.blocks, sampling, a.seed);
  design_rows(d, t, phi2, a, sampling,
              [&] { return antithetic_design_variance(dist, d.lags, a.blocks, kAntitheticNodes); });
}

// The lines route: the atoms are the measure (PD with no negative mass, tolerance 0: nothing is estimated), the
// frequencies their discrete inverse CDF.
void design_from_lines(Design& d, const LineSpectrum& s, double residual, const KernelGrid& t,
                       const Eigen::VectorXd& phi2, const DesignArgs& a, DesignSampling sampling) {
  d.route = "lines";
  d.lines = s;
  d.line_residual = residual;
  d.est.positive_definite = true;
  d.est.negative_mass = d.est.negative_mass_untapered = d.est.tolerance = 0;
  d.est.w_max = s.w[s.w.size() - 1];
  d.est.integral = s.mass.sum();
  d.freqs = design_frequencies(s, a.blocks, sampling, a.seed);
  design_rows(d, t, phi2, a, sampling, [&] { return antithetic_design_variance(s, d.lags, a.blocks); });
}

Design run(const DesignArgs& a) {
  const Where where = Where::options(kCommand);
  const DesignSampling sampling = parse_design_sampling(a.sampling, kCommand);
  if (sampling == DesignSampling::quantile && a.seed_opt && a.seed_opt->count())
    throw_bad_value(where, "seed", std::to_string(a.seed),
                    "absent with --sampling quantile (the quantile grid is deterministic; use iid or antithetic)");
  if (a.wpoints && a.wpoints < 2) throw_bad_value(where, "wpoints", std::to_string(a.wpoints), "at least 2");
  if (a.tolerance) check_nonnegative(where, "tolerance", *a.tolerance);
  if (a.taper != "none" && a.taper != "fejer") throw_bad_value(where, "taper", "'" + a.taper + "'", "none or fejer");
  if (!a.spectrum_route.empty() && a.spectrum_route != "lines" && a.spectrum_route != "table")
    throw_bad_value(where, "spectrum-route", "'" + a.spectrum_route + "'", "lines or table");
  Design d;
  const std::string& k = a.kernel;
  if (k.rfind("kernel:", 0) == 0 || k.rfind("data:", 0) == 0) {
    if (a.wmax)
      throw_bad_value(where, "wmax", format_number(*a.wmax),
                      "absent for kernel: and data: inputs (their density grid is [0, pi/h], the Nyquist band of the "
                      "lag step h; refine it with --wpoints)");
  }
  if (!a.spectrum_route.empty() && k.rfind("kernel:", 0) != 0)
    throw_bad_value(where, "spectrum-route", "'" + a.spectrum_route + "'",
                    "absent except for kernel:ENCODING inputs (a spectral family's density is exact; a data: table "
                    "has the table route only)");
  if (k.rfind("kernel:", 0) == 0) {
    d.source = Source::encoding;
    const std::string text = k.substr(7);
    Encoding e;
    try {
      e = parse_encoding(text, Where(kCommand));
    } catch (const InputError& err) {
      bad_kernel(k, fmt::format("an encoding spelling after kernel: ({})", err.what()));
    }
    if (!is_relative(e) || lag_dims(e) != 1)
      bad_kernel(k, "a relative encoding of 1-D lags after kernel: (its kernel must be a function of Dp alone)");
    const Lags grid = parse_lags(a.lags.empty() ? kDefaultLags : a.lags, 1, where, "--lags");
    const Eigen::VectorXd x = grid.col(0);
    const double h = even_step(where, a.lags.empty() ? kDefaultLags : a.lags, x);
    const double N = static_cast<double>(x.size());
    // The route: lines when the encoding has a line spectrum whose sum is its kernel on every lag (checked below),
    // unless --spectrum-route table.
    std::optional<LineSpectrum> lines;
    if (a.spectrum_route == "table") d.route_reason = "--spectrum-route table";
    else lines = line_spectrum(e, &d.route_reason);
    auto refuse_lines = [&] {
      throw_bad_value(where, "spectrum-route", "'lines'",
                      fmt::format("table for '{}': {}", text, d.route_reason));
    };
    if (!lines && a.spectrum_route == "lines") refuse_lines();
    const std::string lags_value = "'" + (a.lags.empty() ? kDefaultLags : a.lags) + "'";
    const double kernel_seconds = 2 * N * 20 * 128 / kElementsPerSecond;
    auto table_budget = [&] {
      const std::int64_t M = a.wpoints ? a.wpoints : default_density_points(x.size());
      check_budget(where, "lags", lags_value, static_cast<double>(M) * N, 8 * (2 * N + 6 * static_cast<double>(M)), N,
                   a.blocks, sampling == DesignSampling::antithetic, kernel_seconds);
    };
    if (lines) {
      // The identity sum and the antithetic moments: F cosines per lag each.
      const double F = static_cast<double>(lines->w.size());
      const double cosines = N * F * (sampling == DesignSampling::antithetic ? 2 : 1);
      check_budget(where, "lags", lags_value, 0, 8 * 3 * F, N, a.blocks, false,
                   kernel_seconds + cosines / kCosinesPerSecond);
    } else {
      table_budget();
    }
    KernelGrid t;
    t.step = h;
    Eigen::VectorXd phi2;
    try {
      t.phi = kernel(e, grid);
      phi2 = kernel(e, Lags(2 * grid));
    } catch (const InputError& err) {
      bad_kernel(k, fmt::format("an encoding whose kernel is defined on the lags ({})", err.what()));
    }
    for (Eigen::Index i = 0; i < t.phi.size(); ++i) {
      if (!std::isfinite(t.phi[i]))
        throw_bad_value(where, "lags", format_number(x[i]), fmt::format("lags at which the kernel of '{}' is finite", text));
      if (!std::isfinite(phi2[i])) phi2[i] = NAN;
    }
    double residual = NAN;
    if (lines) {
      residual = (line_kernel(*lines, x) - t.phi).cwiseAbs().maxCoeff();
      if (!(residual <= line_identity_tolerance(*lines))) {
        d.route_reason = fmt::format("its kernel is not the sum of its lines on the lags (max |difference| {} > {})",
                                     format_significant(residual, 3),
                                     format_significant(line_identity_tolerance(*lines), 3));
        if (a.spectrum_route == "lines") refuse_lines();
        lines.reset();
        table_budget();
      }
    }
    if (lines) {
      const std::string on_lines = fmt::format("on the lines route (the kernel of '{}' is an exact line spectrum; "
                                               "--spectrum-route table estimates a density from the table instead)",
                                               text);
      if (a.taper != "none") throw_bad_value(where, "taper", "'" + a.taper + "'", "none " + on_lines);
      if (a.tolerance) throw_bad_value(where, "tolerance", format_number(*a.tolerance), "absent " + on_lines);
      if (a.wpoints) throw_bad_value(where, "wpoints", std::to_string(a.wpoints), "absent " + on_lines);
      design_from_lines(d, *lines, residual, t, phi2, a, sampling);
    } else {
      design_from_table(d, t, phi2, a, sampling);
      // Bochner for a real kernel needs Phi(-Dp) = Phi(Dp); the table route reads Phi at Dp >= 0 only, so a kernel
      // that is not even (xPos's zeta^{Dp/S} grows on one side) is refuted here, whatever the transform says.
      // Tolerance 1e-12 (relative to max(1, |Phi|)): a few roundings of tr G, far below any real asymmetry.
      const Eigen::VectorXd mirrored = kernel(e, Lags(-grid));
      for (Eigen::Index i = 0; i < x.size(); ++i) {
        const double gap = std::abs(mirrored[i] - t.phi[i]);
        if (!(gap <= 1e-12 * std::max(1.0, std::abs(t.phi[i])))) {
          d.est.positive_definite = false;
          d.odd_at = x[i];
          d.odd_values = {t.phi[i], mirrored[i]};
          break;
        }
      }
    }
  } else if (k.rfind("data:", 0) == 0) {
    d.source = Source::data;
    const std::string path = k.substr(5);
    if (!a.lags.empty())
      throw_bad_value(where, "lags", "'" + a.lags + "'", "absent for data: inputs (the table's lags are the grid)");
    const KernelGrid t = kernel_grid(read_kernel_table(path, std::string(kCommand) + ": --kernel"), kCommand);
    const double N = static_cast<double>(t.phi.size());
    const std::int64_t M = a.wpoints ? a.wpoints : default_density_points(t.phi.size());
    check_budget(where, "kernel", "'" + k + "' (" + format_number(N) + " rows)", static_cast<double>(M) * N,
                 8 * (2 * N + 6 * static_cast<double>(M)), N, a.blocks, sampling == DesignSampling::antithetic, 0);
    // Phi(2 Dp) from the table where 2k is one of its rows (NaN beyond).
    Eigen::VectorXd phi2(t.phi.size());
    for (Eigen::Index i = 0; i < t.phi.size(); ++i) phi2[i] = 2 * i < t.phi.size() ? t.phi[2 * i] : NAN;
    design_from_table(d, t, phi2, a, sampling);
  } else {
    d.source = Source::family;
    d.route = "closed form";
    Spectrum s;
    try {
      s = parse_spectrum(k);
    } catch (const InputError& err) {
      bad_kernel(k, fmt::format("a 1-D spectral family (gaussian:sigma=2, cauchy:b=1, matern:nu=2.5,l=3, ...), "
                                "kernel:ENCODING or data:FILE.csv ({})",
                                err.what()));
    }
    if (dims(s) != 1) bad_kernel(k, fmt::format("a 1-D spectral family (this one has dims = {})", dims(s)));
    if (std::holds_alternative<spectral::Empirical>(s))
      bad_kernel(k, "a spectral family with a density (a file: spectrum is point masses; use kernel:rf-rope:... or "
                    "data:FILE.csv)");
    try {
      check_samplable(s, kCommand);
      const double zero = 0;
      (void)density(s, std::span<const double>(&zero, 1));
    } catch (const InputError& err) {
      bad_kernel(k, fmt::format("a spectral family with a density that can be sampled ({})", err.what()));
    }
    if (a.tolerance)
      throw_bad_value(where, "tolerance", format_number(*a.tolerance),
                      "absent for a spectral family (positive definite by construction: no certificate)");
    if (a.taper != "none")
      throw_bad_value(where, "taper", "'" + a.taper + "'", "none for a spectral family (its density is exact)");
    const Lags grid = parse_lags(a.lags.empty() ? kDefaultLags : a.lags, 1, where, "--lags");
    for (Eigen::Index i = 0; i < grid.rows(); ++i)
      if (!(std::fabs(grid(i, 0)) <= kMaxLag))
        throw_bad_value(where, "lags", format_number(grid(i, 0)),
                        fmt::format("at most {} in magnitude (Phi2 is evaluated at 2 Dp)", format_number(kMaxLag)));
    const double w_max = a.wmax ? *a.wmax : quantile(s, 1 - kFamilyTailMass / 2);
    check_positive(where, "wmax", w_max);
    const std::int64_t M = a.wpoints ? a.wpoints : 4097;
    const double L = static_cast<double>(grid.rows());
    check_budget(where, "lags", "'" + (a.lags.empty() ? kDefaultLags : a.lags) + "'", 0,
                 8 * 3 * static_cast<double>(M), L, a.blocks, false,
                 (static_cast<double>(M) + 2 * L) * kernel_values_work(s) / kElementsPerSecond);
    DensityEstimate& e = d.est;
    e.w_max = w_max;
    e.w.resize(M);
    e.p.resize(M);
    for (std::int64_t j = 0; j < M; ++j) {
      e.w[j] = w_max * static_cast<double>(j) / static_cast<double>(M - 1);
      e.p[j] = density(s, std::span<const double>(&e.w[j], 1));
    }
    e.w[M - 1] = w_max;
    d.p_closed_form = e.p;
    double sum = 0;
    for (std::int64_t j = 0; j < M; ++j) sum += (j == 0 || j == M - 1 ? 0.5 : 1.0) * e.p[j];
    e.integral = 2 * sum * w_max / static_cast<double>(M - 1);
    // The library's rf-rope draw: quantile = the deterministic grid (no seed), else the seeded iid / antithetic draw.
    SampledFrequencies sf;
    sf.spectrum = s;
    sf.count = a.blocks;
    if (sampling != DesignSampling::quantile) {
      sf.seed = a.seed;
      sf.sampling = sampling == DesignSampling::iid ? Sampling::iid : Sampling::antithetic;
    }
    d.freqs = frequencies(FrequencySchedule{sf, scaling::None{}}).theta.col(0);
    d.tuned = spelling(Encoding{enc::RfRope{sf}});
    const Eigen::Index n = grid.rows();
    d.lags = grid.col(0);
    d.target.resize(n);
    d.variance.resize(n);
    d.variance_iid.resize(n);
    d.realised = realised_kernel(d.freqs, d.lags);
    // Prop 4 per frequency, Var[cos u] = (1 + Phi2)/2 - Phi^2 without cancellation (kernel_values). The library's
    // antithetic pairs (w, -w) share cos: each pair is one block of weight 2/D, so Var = (4 floor(D/2) + D mod 2)/D^2
    // Var[cos u] (about twice iid's).
    const double D = a.blocks;
    const double anti = (4.0 * (a.blocks / 2) + a.blocks % 2) / (D * D);
    for (Eigen::Index i = 0; i < n; ++i) {
      const KernelValues v = kernel_values(s, std::span<const double>(&d.lags[i], 1));
      d.target[i] = v.phi;
      d.variance_iid[i] = v.var_cos / D;
      d.variance[i] = sampling == DesignSampling::quantile ? 0.0
                      : sampling == DesignSampling::iid    ? v.var_cos / D
                                                           : anti * v.var_cos;
    }
  }
  const Eigen::VectorXd err = d.realised - d.target;
  d.max_abs = err.cwiseAbs().maxCoeff();
  d.rms = std::sqrt(err.squaredNorm() / static_cast<double>(err.size()));
  return d;
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
  j["kernel"] = a.kernel;
  j["source"] = source_name(d.source);
  j["spectrum_route"] = d.route;
  j["spectrum_route_reason"] = d.route_reason.empty() ? ordered_json(nullptr) : ordered_json(d.route_reason);
  j["line_identity_residual"] = number(d.line_residual);
  j["positive_definite"] = d.est.positive_definite;
  j["negative_mass"] = number(d.est.negative_mass);
  j["negative_mass_untapered"] = number(d.est.negative_mass_untapered);
  j["not_even_at"] = number(d.odd_at);  // a lag where Phi(-Dp) != Phi(Dp) (kernel: inputs), else null
  j["tolerance"] = number(d.est.tolerance);
  j["blocks"] = a.blocks;
  j["sampling"] = design_sampling_name(sampling);
  j["seed"] = sampling == DesignSampling::quantile ? ordered_json(nullptr) : ordered_json(a.seed);
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
  std::string md = fmt::format("# Inverse design of `{}`\n\n- ropekit {}; command: `{}`\n", a.kernel, kVersion, ctx.command);
  md += fmt::format("- input: {}; D = {} blocks, sampling {}{}\n\n", source_name(d.source), a.blocks,
                    design_sampling_name(sampling),
                    sampling == DesignSampling::quantile ? " (deterministic)" : fmt::format(", seed {}", a.seed));
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
  const DesignSampling sampling = parse_design_sampling(a.sampling, kCommand);
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
  c->add_option("--kernel", a->kernel,
                "the target: a 1-D spectral family (gaussian:sigma=2, cauchy:b=1, matern:nu=2.5,l=3, ...: closed-form "
                "density, the library's rf-rope draw); kernel:ENCODING (Phi = the encoding's kernel on --lags, e.g. "
                "kernel:rope:dim=128,scaling=yarn(factor=32,orig=4096)); or data:FILE.csv (header lag,value; lags an "
                "even grid k h from 0 to 1e-9 relative, refused otherwise (no resampling); Phi(0) = 1 to 1e-9)")
      ->required();
  add_integer_option(c, kCommand, "--blocks", a->blocks, "D, the number of frequencies (rotary blocks)", 1,
                     std::int64_t{1} << 24)
      ->required();
  c->add_option("--sampling", a->sampling,
                "quantile (deterministic w_i = Q((i - 1/2)/D)), iid (w_i = Q(U_i)) or antithetic. Tables: antithetic "
                "pairs Q(U), Q(1 - U) on |w|'s CDF (variance-reducing); spectral families: the library's rf-rope "
                "antithetic pairs (w, -w), which share cos and so are no variance reduction for the kernel")
      ->capture_default_str();
  a->seed_opt = add_seed_option(c, kCommand, "--seed", a->seed,
                                fmt::format("seed of iid and antithetic draws (default {}; refused with quantile)",
                                            kDefaultSeed));
  c->add_option("--spectrum-route", a->spectrum_route,
                "kernel:ENCODING only: lines (the default when the encoding is rope, rope-matched or 1-D rf-rope and "
                "its kernel equals the sum of its lines on every lag: the exact atoms m_i at theta_i, PD by their "
                "signs, frequencies from their discrete CDF) or table (the density estimated from the sampled kernel, "
                "as for data: tables; the default for every other encoding)");
  c->add_option("--taper", a->taper,
                "table route only: the density the frequencies are drawn from: none = max(p, 0), p the interpolant's "
                "transform (its kernel is Phi at the table's lags where p >= 0); fejer = p_F (>= 0 for PD kernels, "
                "concentrated on spectral lines, but its kernel is Phi(x)(1 - x/X), X = N h)")
      ->capture_default_str();
  c->add_option("--lags", a->lags,
                "lags compared (and, for kernel:, the even grid Phi is sampled on): list or start:stop[:step], stop "
                "excluded (default 0:4097, i.e. 0..4096); not for data: inputs");
  add_integer_option(c, kCommand, "--wpoints", a->wpoints,
                     "density grid points M on [0, w_max] (default: tables 2(N-1)+1 clamped to [4097, 65537]; "
                     "families 4097)",
                     2, std::int64_t{1} << 26);
  add_real_option(c, kCommand, "--wmax", a->wmax,
                  "spectral families only: top of the density grid (default: the 1 - 1e-6 two-sided quantile); tables "
                  "use pi/h");
  add_real_option(c, kCommand, "--tolerance", a->tolerance,
                  "tables only: the negative-mass threshold of the certificate (default 8 N eps (|Phi_0| + 2 sum "
                  "|Phi_k|), the rounding bound; raise it to the table's own precision)");
  c->add_option("--format", a->format,
                "md (summary, verdict, frequencies, error table), json (everything) or csv (the error table)")
      ->capture_default_str();
  c->add_option("--out", a->out, "output file (default: stdout); written only if the run completes (exit code 0 or 3)");
  c->add_option("--export", a->export_path,
                "also write the frequencies: FILE.txt (one per line, %.17g), FILE.json (an array) or FILE.npy (NumPy "
                "float64)");
  c->callback([a, ctx] { run_design(*a, ctx); });
}

}  // namespace ropekit
