// Tuning an encoding's free parameters by variable projection (Golub-Pereyra) with Ceres, and the module's entry.
// With spectral_param_fit.cpp the Ceres module (issue 8): every input is validated before Ceres sees it (Ceres
// aborts on misuse), and the starts are clamped into the bounds.
#include "ropekit/fit/param_fit.hpp"
#include "ropekit/fit/param_fit_module.hpp"
#include "ropekit/fit/ceres_solver.hpp"

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

std::vector<double> periodogram_peaks(const Eigen::VectorXd& lags, const Eigen::VectorXd& y, int count) {
  if (lags.size() < 3 || count < 1) return {};
  const double span = std::max(lags.maxCoeff() - lags.minCoeff(), 1.0);
  const int M = static_cast<int>(std::min(4096.0, std::ceil(4 * span / 2)));  // 4 points per 2 pi / span
  // Hann window over the span: side lobes 31 dB down, so that they do not pass as peaks.
  const double first = lags.minCoeff();
  const Eigen::VectorXd yc =
      (y.array() - y.mean()) * (0.5 - 0.5 * (2 * std::numbers::pi * (lags.array() - first) / span).cos());
  std::vector<double> power(static_cast<std::size_t>(M + 2), 0.0);
  Eigen::VectorXd angle(lags.size()), sin_w(lags.size()), cos_w(lags.size());
  for (int j = 1; j <= M; ++j) {
    angle = (std::numbers::pi * j / M) * lags;
    sincos_array(angle.data(), sin_w.data(), cos_w.data(), static_cast<std::size_t>(angle.size()));
    const double re = yc.dot(cos_w), im = yc.dot(sin_w);
    power[static_cast<std::size_t>(j)] = re * re + im * im;
  }
  std::vector<std::pair<double, double>> peaks;  // (power, w)
  for (int j = 1; j <= M; ++j) {
    const double P = power[static_cast<std::size_t>(j)];
    if (P > power[static_cast<std::size_t>(j - 1)] && P >= power[static_cast<std::size_t>(j + 1)])
      peaks.emplace_back(P, std::numbers::pi * j / M);
  }
  std::sort(peaks.begin(), peaks.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<double> out;
  for (const auto& [P, w] : peaks) {
    if (static_cast<int>(out.size()) >= count || P < 1e-2 * peaks.front().first) break;
    out.push_back(w);
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

std::vector<EncodingScore> score_encoding(const Encoding& e, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                                          int train_context, const std::vector<int>& eval_contexts, double ridge) {
  const Eigen::MatrixXd X = features(e, Lags(lags)).values;
  auto below = [&](double limit) {
    Eigen::Index n = 0;
    while (n < lags.size() && lags[n] < limit) ++n;
    return n;
  };
  const Eigen::Index n_train = below(train_context);
  RidgeOptions o;
  o.lambda = ridge;
  const RidgeFit fit = fit_ridge(X.topRows(n_train), y.head(n_train), o);
  const Eigen::VectorXd pred = X * fit.weights.col(0);
  std::vector<EncodingScore> rows;
  auto add = [&](int context, const char* split, Eigen::Index n) {
    const auto q = fit_quality(pred.head(n), y.head(n));
    rows.push_back({context, split, n, q.mse, q.r2, fit.cond});
  };
  add(train_context, "train", n_train);
  for (int T : eval_contexts) add(T, "eval", below(T));
  return rows;
}

}  // namespace ropekit

// The module's entry (param_fit_module.hpp): the definitions above, seen through the loader in the binaries.
extern "C" __attribute__((visibility("default"))) const ropekit::ParamFitModule* ropekit_param_fit_module() {
  // Ceres logs some terminations through glog whatever logging_type says ("E... Terminating: Number of consecutive
  // invalid steps ..."): stderr carries ropekit's lines only, so glog keeps FATAL (a failed CHECK) alone.
  FLAGS_minloglevel = google::GLOG_FATAL;
  static const ropekit::ParamFitModule table{ropekit::kParamFitModuleAbi, ropekit::param_fit_struct_sizes(),
                                             &ropekit::tunable_features, &ropekit::varpro_evaluate,
                                             &ropekit::periodogram_peaks, &ropekit::tune_encoding,
                                             &ropekit::score_encoding, &ropekit::fit_spectrum,
                                             [](const std::atomic<bool>* flag, void (*call)(void*), void* context) {
                                               const ropekit::CancelScope scope(flag);
                                               call(context);
                                             }};
  return &table;
}
