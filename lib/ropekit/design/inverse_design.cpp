#include "ropekit/design/inverse_design.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include <fmt/format.h>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/kernel_cost.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "targets/kernel_table.hpp"

namespace ropekit {

namespace {

const std::string kCommand = "ropekit design";
// Lags 0, 1, ..., 4096 (parse_lags ranges exclude their stop).
const std::string kDefaultLags = "0:4097";
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

// A library message re-thrown with the command's name and the --kernel value in front.
[[noreturn]] void bad_kernel(const std::string& text, const std::string& why) {
  throw_bad_value(Where::options(kCommand), "kernel", "'" + text + "'", why);
}

// Sizes the work and memory before anything runs; refuses with the usual one-line message, else tells a.announce.
void check_budget(const DesignRequest& a, const Where& where, const std::string& name, const std::string& value,
                  double density_terms, double density_bytes, double lags, int blocks, bool antithetic_numeric,
                  double extra_seconds, double extra_bytes = 0) {
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
  c.bytes = density_bytes + 40.0 * blocks + 8 * 6 * lags + 30 * (3 * density_bytes / 48 + 2.0 * blocks + 6 * lags) +
            extra_bytes;
  c.seconds = density_terms / kDensityTermsPerSecond / threads + cos_terms / kCosinesPerSecond / threads + extra_seconds;
  if (!c.fits())
    check_cost(where, name, value, c, "a smaller request", fmt::format("for {} blocks", blocks));
  if (a.announce)
    a.announce(fmt::format("{} density terms, {} realised-kernel cosines", format_number(density_terms),
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
void design_rows(DesignResult& d, const KernelGrid& t, const Eigen::VectorXd& phi2, const DesignRequest& a,
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
void design_from_table(DesignResult& d, const KernelGrid& t, const Eigen::VectorXd& phi2, const DesignRequest& a,
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
void design_from_lines(DesignResult& d, const LineSpectrum& s, double residual, const KernelGrid& t,
                       const Eigen::VectorXd& phi2, const DesignRequest& a, DesignSampling sampling) {
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

}  // namespace

DesignResult inverse_design(const DesignRequest& a) {
  const Where where = Where::options(kCommand);
  check_in_range(where, "blocks", a.blocks, 1, std::int64_t{1} << 24);
  const DesignSampling sampling = parse_design_sampling(a.sampling, kCommand);
  // The lags as text for messages ("(given)" for values), and as values.
  const std::string lags_text = a.lags ? std::string("(given)") : a.lags_text.empty() ? kDefaultLags : a.lags_text;
  auto lag_grid = [&] { return a.lags ? *a.lags : parse_lags(lags_text, 1, where, "--lags"); };
  if (sampling == DesignSampling::quantile && a.seed_given)
    throw_bad_value(where, "seed", std::to_string(a.seed),
                    "absent with --sampling quantile (the quantile grid is deterministic; use iid or antithetic)");
  if (a.wpoints && a.wpoints < 2) throw_bad_value(where, "wpoints", std::to_string(a.wpoints), "at least 2");
  if (a.tolerance) check_nonnegative(where, "tolerance", *a.tolerance);
  if (a.taper != "none" && a.taper != "fejer") throw_bad_value(where, "taper", "'" + a.taper + "'", "none or fejer");
  if (!a.spectrum_route.empty() && a.spectrum_route != "lines" && a.spectrum_route != "table")
    throw_bad_value(where, "spectrum-route", "'" + a.spectrum_route + "'", "lines or table");
  DesignResult d;
  d.sampling = sampling;
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
    d.source = DesignSource::encoding;
    const std::string text = k.substr(7);
    Encoding e;
    try {
      e = parse_encoding(text, Where(kCommand));
    } catch (const InputError& err) {
      bad_kernel(k, fmt::format("an encoding spelling after kernel: ({})", err.what()));
    }
    if (!is_relative(e) || lag_dims(e) != 1)
      bad_kernel(k, "a relative encoding of 1-D lags after kernel: (its kernel must be a function of Dp alone)");
    check_encoding_blocks(where, "kernel", k, e);
    const Lags grid = lag_grid();
    const Eigen::VectorXd x = grid.col(0);
    const double h = even_step(where, lags_text, x);
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
    const std::string lags_value = "'" + lags_text + "'";
    // The kernel at the lags, at twice them and (table route) at minus them, sized by the encoding's real n (issue
    // 20 item 11: sized as if n = 128, rope:dim=2^24 ran silently for an hour).
    const Cost kernel_cost = encoding_kernel_cost(e).at(N);
    const double kernel_seconds = 3 * kernel_cost.seconds;
    auto table_budget = [&] {
      const std::int64_t M = a.wpoints ? a.wpoints : default_density_points(x.size());
      check_budget(a, where, "lags", lags_value, static_cast<double>(M) * N, 8 * (2 * N + 6 * static_cast<double>(M)), N,
                   a.blocks, sampling == DesignSampling::antithetic, kernel_seconds, kernel_cost.bytes);
    };
    if (lines) {
      // The identity sum and the antithetic moments: F cosines per lag each.
      const double F = static_cast<double>(lines->w.size());
      const double cosines = N * F * (sampling == DesignSampling::antithetic ? 2 : 1);
      check_budget(a, where, "lags", lags_value, 0, 8 * 3 * F, N, a.blocks, false,
                   kernel_seconds + cosines / kCosinesPerSecond, kernel_cost.bytes);
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
    d.source = DesignSource::data;
    const std::string path = k.substr(5);
    if (a.lags || !a.lags_text.empty())
      throw_bad_value(where, "lags", "'" + lags_text + "'", "absent for data: inputs (the table's lags are the grid)");
    const KernelGrid t = kernel_grid(read_kernel_table(path, std::string(kCommand) + ": --kernel"), kCommand);
    const double N = static_cast<double>(t.phi.size());
    const std::int64_t M = a.wpoints ? a.wpoints : default_density_points(t.phi.size());
    check_budget(a, where, "kernel", "'" + k + "' (" + format_number(N) + " rows)", static_cast<double>(M) * N,
                 8 * (2 * N + 6 * static_cast<double>(M)), N, a.blocks, sampling == DesignSampling::antithetic, 0);
    // Phi(2 Dp) from the table where 2k is one of its rows (NaN beyond).
    Eigen::VectorXd phi2(t.phi.size());
    for (Eigen::Index i = 0; i < t.phi.size(); ++i) phi2[i] = 2 * i < t.phi.size() ? t.phi[2 * i] : NAN;
    design_from_table(d, t, phi2, a, sampling);
  } else {
    d.source = DesignSource::family;
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
    const Lags grid = lag_grid();
    check_rf_lag_range(where, std::span<const double>(grid.data(), static_cast<std::size_t>(grid.rows())));
    const double w_max = a.wmax ? *a.wmax : quantile(s, 1 - kFamilyTailMass / 2);
    check_positive(where, "wmax", w_max);
    const std::int64_t M = a.wpoints ? a.wpoints : 4097;
    const double L = static_cast<double>(grid.rows());
    check_budget(a, where, "lags", "'" + lags_text + "'", 0,
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

}  // namespace ropekit
