// Spectral families fitted to kernel values with Ceres (fit_spectrum: `ropekit fit-params --spectrum`), part of the
// Ceres module with param_fit.cpp: every input is validated before Ceres sees it (Ceres aborts on misuse).
#include "ropekit/fit/param_fit.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <numbers>
#include <tuple>

#include <ceres/ceres.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/fit/ceres_solver.hpp"
#include "ropekit/fit/spectral_fit_stats.hpp"

namespace ropekit {

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
