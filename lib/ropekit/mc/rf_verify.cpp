#include "ropekit/mc/rf_verify.hpp"

#include <cfloat>
#include <cmath>
#include <limits>

#include <boost/math/distributions/normal.hpp>
#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

namespace {

std::span<const double> row_span(const Eigen::MatrixXd& lags, Eigen::Index r, std::vector<double>& buf) {
  buf.resize(static_cast<std::size_t>(lags.cols()));
  for (Eigen::Index j = 0; j < lags.cols(); ++j) buf[static_cast<std::size_t>(j)] = lags(r, j);
  return buf;
}

// Float64 rounding of one score: the sum of D terms A cos u + B sin u (each within an ulp or two) and
// of q . k; a generous (D + 8) * 8 eps * sum(|A| + |B|).
double score_rounding(const Coefficients& c) {
  return 8 * (static_cast<double>(c.A.size()) + 8) * DBL_EPSILON * (c.A.cwiseAbs().sum() + c.B.cwiseAbs().sum());
}

double ratio_z(double diff, double se) {
  if (se > 0) return diff / se;
  return diff == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
}

double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxy / sxx;
}

void check_alpha(double alpha) {
  if (!(alpha > 0 && alpha < 1)) throw_bad_value("ropekit verify", "alpha", format_number(alpha), "in (0, 1)");
}

}  // namespace

double min_alpha(std::size_t checks) {
  return 2.0 * static_cast<double>(std::max<std::size_t>(checks, 1)) * std::numeric_limits<double>::min();
}

double bonferroni_z(double alpha, std::size_t checks) {
  check_alpha(alpha);
  if (!(alpha >= min_alpha(checks)))
    throw_bad_value("ropekit verify", "alpha", format_number(alpha),
                    fmt::format("at least {} for {} lags: alpha / (2 L) must be a normal float64 number for the normal "
                                "quantile", format_number(min_alpha(checks)), checks));
  const double per = alpha / static_cast<double>(std::max<std::size_t>(checks, 1));
  return boost::math::quantile(boost::math::complement(boost::math::normal_distribution<double>(), per / 2));
}

VerifyReport verify(const VerifyOptions& o) {
  check_alpha(o.alpha);
  validate(o.spectrum, "ropekit verify: spectrum");
  const Spectrum& draw = o.draw ? *o.draw : o.spectrum;
  if (dims(draw) != dims(o.spectrum))
    throw_bad_value("ropekit verify", "draw dims", std::to_string(dims(draw)),
                    fmt::format("the spectrum's dims, {}", dims(o.spectrum)));
  const Coefficients c = coefficients(o.content);
  const auto moments = score_moments(draw, c, o.lags, o.mc);

  VerifyReport r;
  r.blocks = o.content.blocks();
  r.trials = o.mc.trials;
  r.alpha = o.alpha;
  const std::size_t checks = o.bonferroni_lags > 0 ? o.bonferroni_lags : static_cast<std::size_t>(o.lags.rows());
  r.alpha_per_lag = o.alpha / static_cast<double>(checks);
  r.z_critical = bonferroni_z(o.alpha, checks);
  r.spectrum = spelling(o.spectrum);
  r.draw = spelling(draw);
  const double round = score_rounding(c);
  const double sum_sq = c.A.squaredNorm() + c.B.squaredNorm();
  std::vector<double> buf;
  for (Eigen::Index i = 0; i < o.lags.rows(); ++i) {
    const auto lag = row_span(o.lags, i, buf);
    const Moments& m = moments[static_cast<std::size_t>(i)];
    LagCheck lc;
    lc.lag.assign(lag.begin(), lag.end());
    lc.expected = expected_score(o.spectrum, c, lag);
    lc.mean = m.mean;
    lc.stderr_mean = m.stderr_mean();
    lc.z = ratio_z(lc.mean - lc.expected, std::hypot(lc.stderr_mean, round));
    lc.var_expected = score_variance(o.spectrum, c, lag, o.mc.sampling);
    lc.var_observed = m.variance();
    lc.var_stderr = m.stderr_variance();
    if (std::isnan(lc.var_expected)) {
      lc.z_var = std::numeric_limits<double>::quiet_NaN();
    } else {
      // Rounding moves s^2 by at most 2 r s + r^2, and Prop 4's value by a few eps (A^2 + B^2) psi.
      const KernelValues kv = kernel_values(o.spectrum, lag);
      const double var_round = 2 * round * std::sqrt(lc.var_expected) + round * round +
                               16 * DBL_EPSILON * sum_sq * std::min(1.0, std::max(kv.psi, kv.psi2));
      lc.z_var = ratio_z(lc.var_observed - lc.var_expected, std::hypot(lc.var_stderr, var_round));
    }
    lc.mean_pass = std::abs(lc.z) <= r.z_critical;
    lc.var_pass = std::isnan(lc.z_var) || std::abs(lc.z_var) <= r.z_critical;
    r.mean_pass = r.mean_pass && lc.mean_pass;
    r.var_pass = r.var_pass && lc.var_pass;
    r.max_abs_z = std::max(r.max_abs_z, std::abs(lc.z));
    if (!std::isnan(lc.z_var)) r.max_abs_z_var = std::max(r.max_abs_z_var, std::abs(lc.z_var));
    r.lags.push_back(std::move(lc));
  }
  return r;
}

ConvergenceReport convergence(const ConvergenceOptions& o) {
  validate(o.spectrum, "ropekit verify convergence: spectrum");
  const Spectrum& draw = o.draw ? *o.draw : o.spectrum;
  if (o.blocks.empty()) throw_bad_value("ropekit verify convergence", "blocks", "none", "at least two block counts");
  int max_blocks = 0;
  for (int D : o.blocks) {
    check_at_least("ropekit verify convergence", "blocks", D, 1);
    max_blocks = std::max(max_blocks, D);
  }
  if (o.blocks.size() < 2) throw_bad_value("ropekit verify convergence", "blocks", "one value", "at least two block counts");
  const Content all = make_content(o.content, max_blocks, o.mc.seed);
  ConvergenceReport r;
  r.tolerance = o.slope_tolerance;
  r.spectrum = spelling(o.spectrum);
  r.draw = spelling(draw);
  std::vector<double> x, y, y_expected, buf;
  for (int D : o.blocks) {
    Content content;
    content.q = all.q.topRows(D);
    content.k = all.k.topRows(D);
    const Coefficients c = coefficients(content);
    const auto moments = score_moments(draw, c, o.lags, o.mc);
    double mse = 0, var = 0;
    for (Eigen::Index i = 0; i < o.lags.rows(); ++i) {
      const auto lag = row_span(o.lags, i, buf);
      const Moments& m = moments[static_cast<std::size_t>(i)];
      const double bias = m.mean - expected_score(o.spectrum, c, lag);
      mse += (m.M2 / m.n + bias * bias) / static_cast<double>(o.lags.rows());
      var += score_variance(o.spectrum, c, lag, o.mc.sampling) / static_cast<double>(o.lags.rows());
    }
    const double qk = std::abs(c.qk());
    ConvergencePoint p{D, std::sqrt(mse) / qk, std::sqrt(var) / qk};
    if (!(p.rel_rms_expected > 0) || !std::isfinite(p.rel_rms_expected))
      throw InputError(fmt::format("ropekit verify convergence: the relative error at D = {} is {} (give a non-zero lag; "
                                   "content with q . k != 0)", D, format_number(p.rel_rms_expected)));
    r.points.push_back(p);
    x.push_back(std::log(D));
    y.push_back(std::log(p.rel_rms));
    y_expected.push_back(std::log(p.rel_rms_expected));
  }
  r.slope = least_squares_slope(x, y);
  r.slope_expected = least_squares_slope(x, y_expected);
  r.pass = std::abs(r.slope + 0.5) <= r.tolerance;
  return r;
}

std::vector<SamplingRow> compare_sampling(const Spectrum& s, const Content& content, const Eigen::MatrixXd& lags,
                                          const McOptions& mc) {
  const Coefficients c = coefficients(content);
  McOptions o = mc;
  o.sampling = Sampling::iid;
  const auto iid = score_moments(s, c, lags, o);
  o.sampling = Sampling::antithetic;
  const auto anti = score_moments(s, c, lags, o);
  std::vector<Moments> strat;
  if (has_quantile(s)) {
    o.sampling = Sampling::stratified;
    strat = score_moments(s, c, lags, o);
  }
  std::vector<SamplingRow> rows;
  std::vector<double> buf;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (Eigen::Index i = 0; i < lags.rows(); ++i) {
    const auto lag = row_span(lags, i, buf);
    const auto l = static_cast<std::size_t>(i);
    SamplingRow r;
    r.lag.assign(lag.begin(), lag.end());
    r.var_iid_expected = score_variance(s, c, lag, Sampling::iid);
    r.var_iid = iid[l].variance();
    r.mean_iid = iid[l].mean;
    r.var_antithetic_expected = score_variance(s, c, lag, Sampling::antithetic);
    r.var_antithetic = anti[l].variance();
    r.mean_antithetic = anti[l].mean;
    r.var_stratified = strat.empty() ? nan : strat[l].variance();
    r.mean_stratified = strat.empty() ? nan : strat[l].mean;
    r.stderr_stratified = strat.empty() ? nan : strat[l].stderr_mean();
    rows.push_back(std::move(r));
  }
  return rows;
}

// The family's own mislabelled density (spectral/<family>.hpp: wrong_density); one overload per family.
Spectrum wrong_density(const Spectrum& s) {
  return std::visit([]<spectral::SpectralFamily F>(const F& f) { return Spectrum(spectral::wrong_density(f)); }, s);
}

std::string wrong_density_note(const Spectrum& s) {
  return std::visit([]<spectral::SpectralFamily F>(const F& f) { return spectral::wrong_density_note(f); }, s);
}

bool differs(const Spectrum& a, const Spectrum& b, const Eigen::MatrixXd& lags) {
  std::vector<double> buf;
  for (Eigen::Index i = 0; i < lags.rows(); ++i) {
    const auto lag = row_span(lags, i, buf);
    if (std::abs(phi(a, lag) - phi(b, lag)) > 1e-12) return true;
  }
  return false;
}

PeakCheck check_peak(const Spectrum& s, std::uint64_t seed) {
  const int k = dims(s);
  std::vector<double> radii;
  for (int i = 1; i <= 10000; ++i) radii.push_back(0.01 * i);
  for (int i = 0; i <= 1200; ++i) radii.push_back(std::pow(10.0, -6 + 0.01 * i));
  std::vector<std::vector<double>> directions;
  for (int j = 0; j < k; ++j) {
    std::vector<double> e(static_cast<std::size_t>(k), 0.0);
    e[static_cast<std::size_t>(j)] = 1;
    directions.push_back(e);
  }
  if (k > 1) {
    Rng rng(seed, 0x7E0'6);
    for (int d = 0; d < 8; ++d) {
      std::vector<double> v(static_cast<std::size_t>(k));
      double n2 = 0;
      for (double& x : v) {
        x = rng.normal();
        n2 += x * x;
      }
      for (double& x : v) x /= std::sqrt(n2);
      directions.push_back(v);
    }
  }
  PeakCheck p;
  const double zero_lag[kMaxDims] = {};
  p.phi0 = phi(s, std::span<const double>(zero_lag, static_cast<std::size_t>(k)));
  p.max_phi = p.max_phi_far = -std::numeric_limits<double>::infinity();
  std::vector<double> lag(static_cast<std::size_t>(k));
  for (const auto& dir : directions)
    for (double r : radii) {
      for (int j = 0; j < k; ++j) lag[static_cast<std::size_t>(j)] = r * dir[static_cast<std::size_t>(j)];
      const double v = phi(s, lag);
      ++p.lags_checked;
      if (v > p.max_phi) {
        p.max_phi = v;
        p.argmax = lag;
      }
      if (r >= 1 && v > p.max_phi_far) {
        p.max_phi_far = v;
        p.argmax_far = lag;
      }
    }
  p.pass = p.phi0 == 1 && p.max_phi <= 1;
  return p;
}

}  // namespace ropekit
