// The only source file of ropekit that includes Ceres (issue 8): every input is validated before Ceres sees it
// (Ceres aborts on misuse), and the starts are clamped into the bounds.
#include "ropekit/fit/param_fit.hpp"
#include "ropekit/fit/param_fit_module.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <numbers>
#include <queue>
#include <tuple>

#include <ceres/ceres.h>
#include <glog/logging.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/cancel.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/fit/linear_fit.hpp"
#include "ropekit/fit/metrics.hpp"
#include "ropekit/fit/periodogram.hpp"
#include "ropekit/fit/spectral_fit_stats.hpp"
#include "ropekit/fit/tuning_scan.hpp"

namespace ropekit {

namespace {

using Jet = ceres::Jet<double, 1>;

// X(p) in double.
Eigen::MatrixXd feature_matrix(const TunableEncoding& t, const Eigen::VectorXd& lags, const double* p) {
  const auto v = tunable_values<double>(t, p);
  const int n = t.n_features();
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> X(lags.size(), n);
  for (Eigen::Index i = 0; i < lags.size(); ++i) tunable_row(t, v, lags[i], X.row(i).data());
  return X;
}

// dX/dp along a direction: the parameters in `seed` carry derivative 1 (a dual-number pass).
Eigen::MatrixXd feature_derivative(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& p,
                                   const std::vector<int>& seed) {
  std::vector<Jet> pj(static_cast<std::size_t>(p.size()));
  for (Eigen::Index i = 0; i < p.size(); ++i) pj[static_cast<std::size_t>(i)] = Jet(p[i]);
  for (int i : seed) pj[static_cast<std::size_t>(i)].v[0] = 1;
  const auto v = tunable_values<Jet>(t, pj.data());
  const int n = t.n_features();
  std::vector<Jet> row(static_cast<std::size_t>(n));
  Eigen::MatrixXd dX(lags.size(), n);
  for (Eigen::Index i = 0; i < lags.size(); ++i) {
    tunable_row(t, v, lags[i], row.data());
    for (int j = 0; j < n; ++j) dX(i, j) = row[static_cast<std::size_t>(j)].v[0];
  }
  return dX;
}

// The projected problem at p: A = [X; sqrt(lambda) I] = Q R (thin), w = R^{-1} Q^T b, r = b - A w.
struct Projection {
  Eigen::MatrixXd Q, R;
  Eigen::VectorXd w, r;
};
Projection project(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, double ridge) {
  const Eigen::Index N = X.rows(), n = X.cols();
  Eigen::MatrixXd A(N + n, n);
  A.topRows(N) = X;
  A.bottomRows(n) = std::sqrt(ridge) * Eigen::MatrixXd::Identity(n, n);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(N + n);
  b.head(N) = y;
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(A);
  Projection pr;
  pr.Q = qr.householderQ() * Eigen::MatrixXd::Identity(N + n, n);
  pr.R = qr.matrixQR().topRows(n).triangularView<Eigen::Upper>();
  pr.w = pr.R.triangularView<Eigen::Upper>().solve(pr.Q.transpose() * b);
  pr.r = b - A * pr.w;
  return pr;
}

// Golub-Pereyra: J = -(I - Q Q^T) U - Q R^{-T} V, with U = [dX w; 0] and V = dX^T r_top per parameter.
void add_jacobian_columns(const Projection& pr, Eigen::MatrixXd U, const Eigen::MatrixXd& V, Eigen::MatrixXd& J,
                          Eigen::Index first) {
  U -= pr.Q * (pr.Q.transpose() * U);
  const Eigen::MatrixXd S = pr.R.transpose().triangularView<Eigen::Lower>().solve(V);
  J.middleCols(first, U.cols()) = -U - pr.Q * S;
}

class VarProCost : public ceres::CostFunction {
 public:
  VarProCost(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y, double ridge)
      : t_(t), lags_(lags), y_(y), ridge_(ridge) {
    set_num_residuals(static_cast<int>(lags.size()) + t.n_features());
    mutable_parameter_block_sizes()->push_back(t.n_params());
  }
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const Eigen::VectorXd p = Eigen::Map<const Eigen::VectorXd>(parameters[0], t_.n_params());
    const auto e = varpro_evaluate(t_, lags_, y_, ridge_, p, jacobians && jacobians[0]);
    if (!e.residual.allFinite()) return false;
    Eigen::Map<Eigen::VectorXd>(residuals, e.residual.size()) = e.residual;
    if (jacobians && jacobians[0]) {
      if (!e.jacobian.allFinite()) return false;
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
          jacobians[0], e.jacobian.rows(), e.jacobian.cols()) = e.jacobian;
    }
    return true;
  }

 private:
  const TunableEncoding& t_;
  const Eigen::VectorXd& lags_;
  const Eigen::VectorXd& y_;
  double ridge_;
};

ceres::Solver::Options solver_options(int max_iterations) {
  ceres::Solver::Options o;
  o.minimizer_type = ceres::TRUST_REGION;
  o.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  o.linear_solver_type = ceres::DENSE_QR;
  o.max_num_iterations = max_iterations;
  // Tight tolerances: recovery tests ask for 1e-6 relative parameters, which needs the cost at rounding level.
  o.function_tolerance = 1e-15;
  o.gradient_tolerance = 1e-16;
  o.parameter_tolerance = 1e-15;
  o.num_threads = 1;
  o.logging_type = ceres::SILENT;
  o.minimizer_progress_to_stdout = false;
  return o;
}

// Calls `f` after each Levenberg-Marquardt iteration (the progress of a long start); never stops the solve.
class ProgressCallback : public ceres::IterationCallback {
 public:
  explicit ProgressCallback(std::function<void(const ceres::IterationSummary&)> f) : f_(std::move(f)) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& summary) override {
    f_(summary);
    return ceres::SOLVER_CONTINUE;
  }

 private:
  std::function<void(const ceres::IterationSummary&)> f_;
};

Eigen::VectorXd clamp_into(const Eigen::VectorXd& p, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  return p.cwiseMax(lo).cwiseMin(hi);
}

}  // namespace

Eigen::MatrixXd tunable_features(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& p) {
  return feature_matrix(t, lags, p.data());
}

VarProEvaluation varpro_evaluate(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                                 double ridge, const Eigen::VectorXd& p, bool with_jacobian) {
  const Eigen::MatrixXd X = feature_matrix(t, lags, p.data());
  const Projection pr = project(X, y, ridge);
  VarProEvaluation out;
  out.residual = pr.r;
  out.weights = pr.w;
  if (!with_jacobian) return out;
  const Eigen::Index N = lags.size(), n = X.cols(), P = p.size();
  const Eigen::VectorXd r_top = pr.r.head(N);
  out.jacobian.resize(N + n, P);
  // The frequencies: one dual pass moves every theta_k at once, and column j of dX depends on its own theta only.
  if (t.freq_map == TunableEncoding::FreqMap::each) {
    const Eigen::Index F = t.theta.size();
    std::vector<int> seed;
    for (Eigen::Index k = 0; k < F; ++k) seed.push_back(t.theta_at + static_cast<int>(k));
    const Eigen::MatrixXd dX = feature_derivative(t, lags, p, seed);
    const auto owner = t.column_frequency();
    Eigen::MatrixXd U = Eigen::MatrixXd::Zero(N + n, F), V = Eigen::MatrixXd::Zero(n, F);
    for (Eigen::Index j = 0; j < n; ++j) {
      const int k = owner[static_cast<std::size_t>(j)];
      if (k < 0) continue;
      U.col(k).head(N) += dX.col(j) * pr.w[j];
      V(j, k) = dX.col(j).dot(r_top);
    }
    add_jacobian_columns(pr, std::move(U), V, out.jacobian, t.theta_at);
  }
  // Every other parameter moves all columns: one dual pass each.
  for (int i = 0; i < P; ++i) {
    if (t.freq_map == TunableEncoding::FreqMap::each && i >= t.theta_at && i < t.theta_at + t.theta.size()) continue;
    const Eigen::MatrixXd dX = feature_derivative(t, lags, p, {i});
    Eigen::MatrixXd U = Eigen::MatrixXd::Zero(N + n, 1);
    U.col(0).head(N) = dX * pr.w;
    const Eigen::MatrixXd V = dX.transpose() * r_top;
    add_jacobian_columns(pr, std::move(U), V, out.jacobian, i);
  }
  return out;
}

TuneResult tune_encoding(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                         const TuneOptions& options) {
  if (!(options.ridge > 0) || !std::isfinite(options.ridge))
    throw_bad_value("ropekit fit-params", "--ridge", format_number(options.ridge),
                    "a finite number > 0: the projected problem needs [X; sqrt(ridge) I] of full rank");
  if (options.starts < 1) throw_bad_value("ropekit fit-params", "--starts", std::to_string(options.starts), "at least 1");
  if (lags.size() == 0 || lags.size() != y.size() || !y.allFinite() || !lags.allFinite())
    throw InputError("ropekit fit-params: the training data must be finite, non-empty, one value per lag");
  const auto clock0 = std::chrono::steady_clock::now();

  // Starts: the untuned encoding, the periodogram's peaks placed on the nearest free frequencies (log scale),
  // then seeded log-normal perturbations (zero-valued gamma or c start from 1/L or 1).
  std::vector<std::pair<std::string, Eigen::VectorXd>> starts{{"untuned", t.start}};
  if (options.starts > 1 && t.freq_map == TunableEncoding::FreqMap::each) {
    const Eigen::Index F = t.theta.size();
    Eigen::VectorXd p = t.start;
    std::vector<bool> used(static_cast<std::size_t>(F), false);
    for (double w : periodogram_peaks(lags, y, static_cast<int>(F))) {
      Eigen::Index best = -1;
      for (Eigen::Index k = 0; k < F; ++k)
        if (!used[static_cast<std::size_t>(k)] &&
            (best < 0 || std::abs(std::log(t.start[t.theta_at + k] / w)) < std::abs(std::log(t.start[t.theta_at + best] / w))))
          best = k;
      if (best < 0) break;
      used[static_cast<std::size_t>(best)] = true;
      p[t.theta_at + best] = w;
    }
    starts.emplace_back("periodogram", clamp_into(p, t.lower, t.upper));
  }
  Rng rng(options.seed, 0x54554E45, 0);  // "TUNE"
  while (static_cast<int>(starts.size()) < options.starts) {
    Eigen::VectorXd p = t.start;
    for (Eigen::Index i = 0; i < p.size(); ++i) {
      const double z = rng.normal();
      if (p[i] > 0)
        p[i] *= std::exp(0.3 * z);
      else
        p[i] = std::abs(z) * (static_cast<int>(i) == t.gamma_at ? 1.0 / t.L : 1.0);
    }
    starts.emplace_back("perturbed", clamp_into(p, t.lower, t.upper));
  }

  // One free frequency-map parameter on a bounded interval: LM from a few starts stops in whichever of the
  // objective's many basins holds the start, so a grid scan brackets every basin and the best three are refined.
  const bool scan = tuning_scans(t);
  TuneResult result;
  // Progress (options.progress): a line per start as it ends, and while a scan or a start runs, one every
  // progress_seconds, so that a long run never goes quiet after its announcement.
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - clock0).count(); };
  double last_line = 0;
  const auto due = [&] {
    if (!options.progress || elapsed() - last_line < options.progress_seconds) return false;
    last_line = elapsed();
    return true;
  };
  const int total = tuning_start_count(t, options.starts);
  if (scan) {
    const auto tick = [&](int done, int points) {
      if (due())
        options.progress(fmt::format("scan of {}: {} of {} grid points ({:.0f} s elapsed)", t.names[0], done, points,
                                     elapsed()));
    };
    for (double p0 : scan_minima(t, lags, y, options.ridge, kScanRefined, result.scanned_points, tick))
      starts.emplace_back("scan", Eigen::VectorXd::Constant(1, p0));
  }
  std::vector<double> ends;
  result.untuned_cost = varpro_evaluate(t, lags, y, options.ridge, t.start, false).residual.squaredNorm();
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t s = 0; s < starts.size(); ++s) {
    check_cancelled();  // between starts (cancel.hpp)
    Eigen::VectorXd p = starts[s].second;
    ceres::Problem problem;
    problem.AddResidualBlock(new VarProCost(t, lags, y, options.ridge), nullptr, p.data());
    for (Eigen::Index i = 0; i < p.size(); ++i) {
      problem.SetParameterLowerBound(p.data(), static_cast<int>(i), t.lower[i]);
      if (std::isfinite(t.upper[i])) problem.SetParameterUpperBound(p.data(), static_cast<int>(i), t.upper[i]);
    }
    ceres::Solver::Summary summary;
    ceres::Solver::Options solver = solver_options(options.max_iterations);
    ProgressCallback callback([&](const ceres::IterationSummary& it) {
      if (due())
        options.progress(fmt::format("start {} of {} ({}): iteration {}, cost {} ({:.0f} s elapsed)", s + 1, total,
                                     starts[s].first, it.iteration, format_number(2 * it.cost), elapsed()));
    });
    solver.callbacks.push_back(&callback);
    ceres::Solve(solver, &problem, &summary);
    TuneStart st;
    st.kind = starts[s].first;
    st.initial_cost = 2 * summary.initial_cost;  // Ceres' cost is |r|^2 / 2
    st.iterations = static_cast<int>(summary.iterations.size()) - 1;
    st.termination = ceres::TerminationTypeToString(summary.termination_type);
    // The cost at the returned p, recomputed: Ceres' final_cost need not be it with bounds (measured on damped RoPE,
    // Table 3's mixed target: final_cost 42.684, cost at the returned p 42.700; test_param_fit checks the recomputation).
    const double cost = varpro_evaluate(t, lags, y, options.ridge, p, false).residual.squaredNorm();
    st.final_cost = cost;
    if (std::isfinite(cost) && cost < best) {
      best = cost;
      result.params = p;
      result.best_start = static_cast<int>(s);
    }
    result.starts.push_back(st);
    ends.push_back(p[0]);
    if (options.progress) {
      last_line = elapsed();
      options.progress(fmt::format("start {} of {} ({}): cost {} -> {} in {} iterations ({}); {:.1f} s elapsed",
                                   s + 1, starts.size(), st.kind, format_number(st.initial_cost),
                                   format_number(st.final_cost), st.iterations, st.termination, last_line));
    }
  }
  // Never worse than the untuned encoding, and not moved for a gain at the rounding level of the cost.
  if (!(best < result.untuned_cost * (1 - 1e-12))) {
    result.params = t.start;
    result.best_start = 0;
    best = result.untuned_cost;
  }
  result.tuned_cost = best;
  result.tuned = tuned_encoding(t, result.params);
  if (t.start.size() == 1) result.notes = agreement_notes(result, ends);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock0).count();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Spectral families fitted to kernel values.

namespace {

struct SpectralModel {
  std::string family;
  std::vector<std::string> keys;  ///< all parameter keys of the family, in spelling order
  std::vector<double> values;     ///< current values (fixed ones stay)
  std::vector<int> free;          ///< indices into keys
};

Spectrum build_spectrum(const SpectralModel& m, const double* p) {
  std::vector<double> v = m.values;
  for (std::size_t i = 0; i < m.free.size(); ++i) v[static_cast<std::size_t>(m.free[i])] = p[i];
  std::string text = m.family + ":";
  for (std::size_t i = 0; i < m.keys.size(); ++i)
    text += (i ? "," : "") + m.keys[i] + "=" + format_number(v[i]);
  return parse_spectrum(text);
}

struct SpectralResiduals {
  SpectralModel model;
  const KernelTable* data;
  bool operator()(double const* const* parameters, double* residuals) const {
    if (const auto* flag = current_cancel_flag(); flag && flag->load()) return false;  // Ctrl-C: see CancelSolve
    Spectrum s;
    try {
      s = build_spectrum(model, parameters[0]);
    } catch (const InputError&) {
      return false;  // a trial step outside the family's domain
    }
    for (Eigen::Index j = 0; j < data->lag.size(); ++j) {
      const double lag = data->lag[j];
      residuals[j] = phi(s, std::span<const double>(&lag, 1)) - data->value[j];
      if (!std::isfinite(residuals[j])) return false;
    }
    return true;
  }
};

// Ends a solve once the caller's cancel flag is set (cancel.hpp); fit_spectrum then throws Cancelled.
struct CancelSolve : ceres::IterationCallback {
  ceres::CallbackReturnType operator()(const ceres::IterationSummary&) override {
    const auto* flag = current_cancel_flag();
    return flag && flag->load() ? ceres::SOLVER_ABORT : ceres::SOLVER_CONTINUE;
  }
};

class AnalyticSpectralCost : public ceres::CostFunction {
 public:
  AnalyticSpectralCost(SpectralResiduals r) : r_(std::move(r)) {
    set_num_residuals(static_cast<int>(r_.data->lag.size()));
    mutable_parameter_block_sizes()->push_back(1);
  }
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    if (!r_(parameters, residuals)) return false;
    if (jacobians && jacobians[0]) {
      // The family's closed-form dPhi/d(scale) (spectral/<family>.hpp), at the trial scale; a non-finite one is a
      // failed evaluation (Ceres rejects the step instead of printing its dump).
      const Spectrum s = build_spectrum(r_.model, parameters[0]);
      for (Eigen::Index j = 0; j < r_.data->lag.size(); ++j) {
        jacobians[0][j] = *spectrum_scale_derivative(s, r_.data->lag[j]);
        if (!std::isfinite(jacobians[0][j])) return false;
      }
    }
    return true;
  }

 private:
  SpectralResiduals r_;
};

}  // namespace

SpectralFitResult fit_spectrum(std::string_view text, const KernelTable& data, std::string_view where,
                               int max_iterations, const std::function<void(const std::string&, double)>& announce) {
  const auto colon = text.find(':');
  SpectralModel m;
  m.family = std::string(text.substr(0, colon));
  // The family's fit keys (spectral/<family>.hpp: fit_keys); families without them are not fitted.
  const std::optional<Spectrum> family = default_spectrum(m.family);
  const std::span<const spectral::FitKey> keys = family ? fit_keys(*family) : std::span<const spectral::FitKey>();
  if (keys.empty())
    throw_bad_value(where, "--spectrum", "'" + std::string(text) + "'",
                    fmt::format("one of {} with free parameters marked ?, e.g. matern:nu=?,l=?", fitted_family_names()));
  // The table as read_kernel_table guarantees it (Python hands arrays directly): rows, finite, lags >= 0 increasing.
  for (Eigen::Index j = 0; j < data.lag.size(); ++j) {
    const std::string row = fmt::format("row {}: lag {}, value {}", j + 1, format_number(data.lag[j]),
                                        format_number(data.value[j]));
    if (!std::isfinite(data.lag[j]) || !std::isfinite(data.value[j]) || !(data.lag[j] >= 0))
      throw_bad_value(where, "--kernel-data", row, "finite values at finite lags >= 0");
    if (!(std::abs(data.value[j]) <= kMaxTableValue))
      throw_bad_value(where, "--kernel-data", row,
                      fmt::format("values at most {} in magnitude (the fit squares and sums them)",
                                  format_number(kMaxTableValue)));
    if (j > 0 && !(data.lag[j] > data.lag[j - 1]))
      throw_bad_value(where, "--kernel-data", row, "strictly increasing lags");
  }
  if (data.lag.size() == 0)
    throw InputError(fmt::format("{}: --kernel-data {}: rows = 0 (must be more than the free parameters, for "
                                 "standard errors)", where, quote(data.source)));
  // A scale guess from the data: the first lag where Phi falls below 1/2 (else the largest lag).
  double scale_guess = data.lag[data.lag.size() - 1];
  for (Eigen::Index j = 0; j < data.lag.size(); ++j)
    if (data.value[j] < 0.5 && data.lag[j] > 0) {
      scale_guess = data.lag[j];
      break;
    }
  if (!(scale_guess > 0)) scale_guess = 1;
  std::vector<double> starts;
  for (const auto& k : keys) {
    m.keys.emplace_back(k.name);
    m.values.push_back(k.start == spectral::FitStart::shape       ? 1.5
                       : k.start == spectral::FitStart::bandwidth ? 1.9 / scale_guess
                                                                  : scale_guess);
  }
  if (colon != std::string_view::npos) {
    std::string_view rest = text.substr(colon + 1);
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      const auto eq = item.find('=');
      const std::string name(item.substr(0, eq));
      const auto it = std::find(m.keys.begin(), m.keys.end(), name);
      if (eq == std::string_view::npos || it == m.keys.end())
        throw_bad_value(where, "--spectrum", "'" + std::string(item) + "'",
                        fmt::format("key=value with a key of {}: {}", m.family, fmt::join(m.keys, ", ")));
      const auto i = static_cast<std::size_t>(it - m.keys.begin());
      std::string_view value = item.substr(eq + 1);
      if (!value.empty() && value.front() == '?') {
        if (std::find(m.free.begin(), m.free.end(), static_cast<int>(i)) != m.free.end())
          throw_bad_value(where, "--spectrum", "'" + name + "'", "named once");
        m.free.push_back(static_cast<int>(i));
        value.remove_prefix(1);
        if (value.empty()) continue;
      }
      const auto v = parse_double(value);
      if (!v || !(*v >= keys[i].lo && *v <= keys[i].hi))
        throw_bad_value(fmt::format("{}: --spectrum {}", where, quote(text)), name, quote(value),
                        fmt::format("a number in [{}, {}]", format_number(keys[i].lo), format_number(keys[i].hi)));
      m.values[i] = *v;
    }
  }
  if (m.free.empty())
    throw_bad_value(where, "--spectrum", "'" + std::string(text) + "'",
                    "at least one parameter marked free with ? (e.g. " + m.family + ":" + m.keys.back() + "=?)");
  const int P = static_cast<int>(m.free.size());
  if (data.lag.size() <= P)
    throw InputError(fmt::format("{}: --kernel-data {}: rows = {} (must be more than the {} free parameters, for "
                                 "standard errors)", where, quote(data.source), data.lag.size(), P));

  const Spectrum start_spectrum = build_spectrum(m, m.values.data() + 0);  // validates the fixed values

  SpectralFitResult out;
  std::vector<double> p;
  for (int i : m.free) p.push_back(m.values[static_cast<std::size_t>(i)]);
  const auto clock0 = std::chrono::steady_clock::now();
  ceres::Problem problem;
  SpectralResiduals residuals{m, &data};
  // Analytic where the family has dPhi/d(scale) in closed form and the scale is its one key.
  const bool analytic = keys.size() == 1 && spectrum_scale_derivative(start_spectrum, 1.0).has_value();
  if (analytic) {
    problem.AddResidualBlock(new AnalyticSpectralCost(residuals), nullptr, p.data());
    out.derivatives = "analytic";
  } else {
    // Matern's Phi has no convenient closed-form derivative in nu: Ridders' extrapolated central differences
    // (Ceres' RIDDERS), accurate to about 1e-10 relative on the library's Phi.
    auto* cost = new ceres::DynamicNumericDiffCostFunction<SpectralResiduals, ceres::RIDDERS>(
        new SpectralResiduals(residuals));
    cost->AddParameterBlock(P);
    cost->SetNumResiduals(static_cast<int>(data.lag.size()));
    problem.AddResidualBlock(cost, nullptr, p.data());
    out.derivatives = "Ridders-extrapolated differences";
  }
  // Sized up front and announced when long (issue 20 item 11: matern:nu=?,l=? on 257 rows ran 353 s silently): Phi's
  // work is the most of the start's and of each free key at its bounds (Matern's general nu costs 200 times more).
  double work = kernel_values_work(start_spectrum);
  for (int i : m.free)
    for (double b : {keys[static_cast<std::size_t>(i)].lo, keys[static_cast<std::size_t>(i)].hi}) {
      const SpectralModel at{m.family, m.keys, m.values, {i}};
      try {
        work = std::max(work, kernel_values_work(build_spectrum(at, &b)));
      } catch (const InputError&) {  // a bound outside the family's domain with the other values
      }
    }
  const double rows = static_cast<double>(data.lag.size());
  const Cost budget{0, spectral_fit_seconds(rows, P, analytic, max_iterations, work)};
  if (!budget.fits())
    throw_bad_value(where, "--kernel-data", fmt::format("'{}' ({} rows)", data.source, data.lag.size()),
                    fmt::format("a table that '{}' fits within the budget with --max-iterations {}: the fit {}; fewer "
                                "rows or iterations", text, max_iterations, budget.excess()));
  // Announced (with the bound) when a typical run is long: Levenberg-Marquardt ends within ~25 iterations on most tables.
  if (announce && spectral_fit_seconds(rows, P, analytic, std::min(max_iterations, 25), work) >= kNoticeSeconds)
    announce(fmt::format("{} rows, {} free parameters, up to {} iterations", data.lag.size(), P, max_iterations),
             budget.seconds);
  for (int i = 0; i < P; ++i) {
    const auto& k = keys[static_cast<std::size_t>(m.free[static_cast<std::size_t>(i)])];
    p[static_cast<std::size_t>(i)] = std::clamp(p[static_cast<std::size_t>(i)], k.lo, k.hi);
    problem.SetParameterLowerBound(p.data(), i, k.lo);
    problem.SetParameterUpperBound(p.data(), i, k.hi);
  }
  // Residuals (and analytic derivatives) that are not finite at the start leave Ceres nothing to do and the standard
  // errors nothing to stand on: refused in one line before Ceres sees them (issue 20 item 9).
  const auto refuse = [&] {
    throw_bad_value(where, "--spectrum", "'" + std::string(text) + "'",
                    fmt::format("finite residuals on --kernel-data '{}' at the start and at the end ({}): start the "
                                "free parameters elsewhere", data.source, spelling(build_spectrum(m, p.data()))));
  };
  {
    std::vector<double> r0(static_cast<std::size_t>(data.lag.size())), j0(r0.size() * static_cast<std::size_t>(P));
    const double* at[] = {p.data()};
    double* jac[] = {j0.data()};
    if (!(analytic ? AnalyticSpectralCost(residuals).Evaluate(at, r0.data(), jac) : residuals(at, r0.data()))) refuse();
  }
  const std::vector<double> start = p;
  ceres::Solver::Summary summary;
  auto options = solver_options(max_iterations);
  options.function_tolerance = 1e-14;  // noisy data: stop at the noise floor
  CancelSolve cancel;
  options.callbacks.push_back(&cancel);
  ceres::Solve(options, &problem, &summary);
  check_cancelled();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock0).count();
  out.initial_cost = summary.initial_cost;
  out.final_cost = summary.final_cost;
  out.iterations = static_cast<int>(summary.iterations.size()) - 1;
  out.termination = ceres::TerminationTypeToString(summary.termination_type);
  out.fitted = build_spectrum(m, p.data());
  out.rows = static_cast<int>(data.lag.size());

  // Standard errors from the Jacobian at the optimum: cov = s^2 (J^T J)^{-1}, s^2 = RSS/(n - p).
  double cost = 0;
  std::vector<double> res;
  ceres::CRSMatrix crs;
  const bool evaluated = problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, &res, nullptr, &crs);
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(crs.num_rows, crs.num_cols);
  for (int r = 0; r < crs.num_rows; ++r)
    for (int k = crs.rows[static_cast<std::size_t>(r)]; k < crs.rows[static_cast<std::size_t>(r) + 1]; ++k)
      J(r, crs.cols[static_cast<std::size_t>(k)]) = crs.values[static_cast<std::size_t>(k)];
  // Residuals that turn non-finite (a scale at the edge of its range: gaussian:sigma=?1e-300) leave no Jacobian and
  // no standard errors: refused in one line, never read past an empty matrix (issue 20 item 9).
  if (!evaluated || !std::isfinite(cost) || !std::isfinite(summary.initial_cost) || J.rows() != data.lag.size() ||
      J.cols() != P || !J.allFinite())
    refuse();
  out.rss = 2 * cost;
  out.rms = std::sqrt(out.rss / out.rows);
  // Standard errors on unit-norm columns, +inf where J does not resolve a parameter (spectral_fit_stats.hpp); a note
  // for one at or beside a bound of its range.
  const Eigen::VectorXd se = least_squares_std_errors(J, out.rss);
  for (int i = 0; i < P; ++i) {
    const auto& key = keys[static_cast<std::size_t>(m.free[static_cast<std::size_t>(i)])];
    SpectralFitParam sp;
    sp.name = m.keys[static_cast<std::size_t>(m.free[static_cast<std::size_t>(i)])];
    sp.start = start[static_cast<std::size_t>(i)];
    sp.estimate = p[static_cast<std::size_t>(i)];
    sp.std_error = se[i];
    sp.note = bound_note(sp.estimate, sp.std_error, key.lo, key.hi);
    out.params.push_back(sp);
  }
  return out;
}

}  // namespace ropekit

// The module's entry (param_fit_module.hpp): the definitions above, seen through the loader in the binaries.
extern "C" __attribute__((visibility("default"))) const ropekit::ParamFitModule* ropekit_param_fit_module() {
  // Ceres logs some terminations through glog whatever logging_type says ("E... Terminating: Number of consecutive
  // invalid steps ..."): stderr carries ropekit's lines only, so glog keeps FATAL (a failed CHECK) alone.
  FLAGS_minloglevel = google::GLOG_FATAL;
  static const ropekit::ParamFitModule table{ropekit::kParamFitModuleAbi, ropekit::param_fit_struct_sizes(),
                                             &ropekit::tunable_features, &ropekit::varpro_evaluate,
                                             &ropekit::tune_encoding, &ropekit::fit_spectrum,
                                             [](const std::atomic<bool>* flag, void (*call)(void*), void* context) {
                                               const ropekit::CancelScope scope(flag);
                                               call(context);
                                             }};
  return &table;
}
