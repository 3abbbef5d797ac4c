#include "ropekit/fit/fit_run.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/fit/linear_fit.hpp"
#include "ropekit/fit/metrics.hpp"

namespace ropekit {

namespace {

// Estimated memory and time of a fixed-basis run at F frequencies, training length L and longest scored
// length T (>= L): see FitConfig::cost.
Cost fit_cost_at(const FitConfig& c, double F, double L, double T) {
  const double nt = static_cast<double>(c.targets.size());
  const double sets = c.train_points >= c.basis.train_context ? 1.0 : static_cast<double>(c.seeds.size());
  BasisParams b = c.basis;
  b.num_freqs = static_cast<int>(std::min<double>(F, kMaxNumFreqs));
  std::vector<double> method_bytes;
  double flops = 0;
  for (const auto& name : c.methods) {
    const double p = n_features(parse_method(name), b);
    const double m = p + nt;  // columns of the QR
    // [X | Y] and its copy in the QR, R, [R; sqrt(lambda) I] (2 p^2), its QR, G and the eigen solver
    // (~10 p^2 in all), the predictions and one chunk of features.
    method_bytes.push_back(8.0 * (2.0 * L * m + 10.0 * p * p + T * nt + 1024.0 * p));
    flops += sets * (2.0 * L * m * std::min(L, m) + 8.0 * p * p * p + 2.0 * T * p * nt + 10.0 * T * p);
  }
  std::sort(method_bytes.rbegin(), method_bytes.rend());
  const std::size_t concurrent = std::min<std::size_t>(method_bytes.size(), std::max(1u, std::thread::hardware_concurrency()));
  double bytes = 8.0 * T * (2.0 * F + nt + 1.0);  // trigonometric tables, targets, lags
  for (std::size_t i = 0; i < concurrent; ++i) bytes += method_bytes[i];
  // Output: one row per (seed, target, method, split/context), 11 cells each, held as cells and as text.
  const double rows = static_cast<double>(c.seeds.size()) * nt * static_cast<double>(c.methods.size()) *
                      (1.0 + static_cast<double>(c.eval_contexts.size()));
  bytes += rows * 11.0 * (40.0 + 2 * 24.0);
  return Cost{bytes, flops / kFlopsPerSecond + T * F * nt / kElementsPerSecond};
}

}  // namespace

int FitConfig::max_length() const {
  int t = basis.train_context;
  for (int e : eval_contexts) t = std::max(t, e);
  return t;
}

Cost FitConfig::cost() const { return fit_cost_at(*this, basis.num_freqs, basis.train_context, max_length()); }

void FitConfig::validate() const {
  const std::string where = "config " + source;
  if (seeds.empty()) throw InputError(where + ": seeds is empty (must list at least one seed)");
  if (methods.empty()) throw InputError(where + ": no methods (must list at least one, in the config or with --methods)");
  if (targets.empty()) throw InputError(where + ": no targets (must list at least one)");
  // Parameters named by their keys in the file.
  const std::string sec = section.empty() ? std::string("toy") : section;
  Where keys(where, sec + ".");
  keys.rename("theta", "position.theta").rename("bounded_tau", "position.bounded_tau");
  keys.rename("freq_index", sec + ".target_freq_index").rename("second_freq_index", sec + ".second_freq_index");
  keys.rename("drift_eps", sec + ".drift_relative_eps");
  basis.validate(keys);
  target.validate(keys);
  if (train_points < 1 || train_points > basis.train_context)
    throw_bad_value(where, section + ".train_points", std::to_string(train_points),
                    fmt::format("an integer in [1, train_context = {}]", basis.train_context));
  if (eval_contexts.empty()) throw InputError(where + ": " + section + ".eval_contexts is empty (must list lengths >= 1)");
  for (std::size_t i = 0; i < eval_contexts.size(); ++i)
    if (eval_contexts[i] < 1)
      throw_bad_value(where, fmt::format("{}.eval_contexts[{}]", section, i), std::to_string(eval_contexts[i]),
                      "an integer >= 1");
    else if (eval_contexts[i] > kMaxLength)
      throw_bad_value(where, fmt::format("{}.eval_contexts[{}]", section, i), std::to_string(eval_contexts[i]),
                      fmt::format("<= {} (features are held in memory)", kMaxLength));
  check_nonnegative(where, section + ".ridge", ridge);
  const Eigen::VectorXd last_lag = Eigen::VectorXd::Constant(1, max_length() - 1.0);
  for (const auto& m : methods)
    if (const auto o = find_lag_overflow(parse_method(m), basis, last_lag))
      throw_bad_value(keys, "eval_contexts", std::to_string(max_length()),
                      fmt::format("at most {} for method '{}': beyond lag {} {} leaves the float64 range",
                                  static_cast<long long>(std::floor(o->limit)) + 1, m, format_number(o->limit),
                                  o->cause));
  for (const auto& t : targets) {
    try {
      const Target parsed = parse_target(t);
      check_target_params(parsed, target, t);
      check_target_range(parsed, target, max_length() - 1.0, t);
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    }
  }

  // Sizes: blame the frequencies if fewer would fit, else the training length, else the scored lengths.
  const double F = basis.num_freqs, L = basis.train_context, T = max_length();
  const Cost cost = fit_cost_at(*this, F, L, T);
  if (cost.fits()) return;
  const std::string for_what = fmt::format("for the config's methods ({}) and targets ({})", methods.size(), targets.size());
  if (fit_cost_at(*this, 1, L, T).fits()) {
    const auto f = largest_fitting(1, basis.num_freqs,
                                   [&](std::int64_t v) { return fit_cost_at(*this, static_cast<double>(v), L, T).fits(); });
    check_cost(keys, "num_freqs", std::to_string(basis.num_freqs), cost, std::to_string(f), for_what);
  }
  const double longest_eval = T > L ? T : 0;
  if (fit_cost_at(*this, F, 1, std::max(1.0, longest_eval)).fits()) {
    const auto l = largest_fitting(1, basis.train_context, [&](std::int64_t v) {
      return fit_cost_at(*this, F, static_cast<double>(v), std::max(static_cast<double>(v), longest_eval)).fits();
    });
    check_cost(keys, "train_context", std::to_string(basis.train_context), cost, std::to_string(l), for_what);
  }
  const auto t = largest_fitting(1, max_length(),
                                 [&](std::int64_t v) { return fit_cost_at(*this, F, 1, static_cast<double>(v)).fits(); });
  check_cost(keys, "eval_contexts", std::to_string(max_length()), cost, std::to_string(std::max<std::int64_t>(t, 0)),
             fmt::format("{} (with train_context 1)", for_what));
}

std::string describe(const FitConfig& c) {
  auto join_ints = [](const auto& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
    return s;
  };
  const auto& b = c.basis;
  const auto& t = c.target;
  return fmt::format(
      "- config: {} (section `{}`)\n"
      "- basis: F = num_freqs = {}, h = head_dim = {}, theta = {}, gamma = {}, L = train_context = {}, "
      "bounded_tau = {}\n"
      "- targets: target_freq_index = {}, second_freq_index = {}, scaled_c = {}, drift_relative_eps = {}\n"
      "- fit: ridge = {} on every column (float64, QR), train_points = {} of lags 0..{}; "
      "scored on lags 0..T-1 for T in {}\n"
      "- seeds: {}{}\n",
      c.source, c.section, b.num_freqs, b.head_dim, format_number(b.theta), format_number(b.gamma), b.train_context,
      b.bounded_tau, t.freq_index ? std::to_string(*t.freq_index) : "unset",
      t.second_freq_index ? std::to_string(*t.second_freq_index) : "unset", format_number(t.scaled_c),
      format_number(t.drift_eps), format_number(c.ridge), c.train_points, b.train_context - 1,
      join_ints(c.eval_contexts), join_ints(c.seeds),
      c.train_points == b.train_context ? " (train_points = L: every seed fits the same lags, so the seeds agree "
                                          "exactly; tables show their mean)"
                                        : " (tables show the mean over seeds)");
}


std::vector<int> training_lags(int train_context, int train_points, std::int64_t seed) {
  std::vector<int> lags(static_cast<std::size_t>(train_context));
  std::iota(lags.begin(), lags.end(), 0);
  if (train_points >= train_context) return lags;
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  for (int i = 0; i < train_points; ++i) {
    std::uniform_int_distribution<int> pick(i, train_context - 1);
    std::swap(lags[static_cast<std::size_t>(i)], lags[static_cast<std::size_t>(pick(rng))]);
  }
  lags.resize(static_cast<std::size_t>(train_points));
  std::sort(lags.begin(), lags.end());
  return lags;
}

namespace {

constexpr Eigen::Index kChunk = 1024;  // lags per prediction chunk: 1024 x 129 doubles = 1 MiB

struct Scores {
  Score train;
  std::vector<Score> eval;  // one per eval context
};

struct MethodFit {
  int n_features = 0;
  double cond = 0;
  int rank = 0;
  std::vector<Scores> per_target;
};

// Fits `method` on the rows `idx` (inside 0..L-1) of Y and predicts every lag of the evaluator's grid.
// The training rows are computed once; longer grids are predicted in cache-sized chunks, so no
// lags x features matrix of the whole grid is ever held.
std::pair<RidgeFit, Eigen::MatrixXd> fit_and_predict(const BasisEvaluator& evaluator, const Method& method,
                                                     const Eigen::MatrixXd& Y, const std::vector<int>& idx, int L,
                                                     double ridge) {
  const Eigen::Index t_max = evaluator.lags().size();
  const Eigen::MatrixXd XL = evaluator.features(method, 0, L);  // rows = lags 0..L-1, cols = features
  const bool prefix = idx.size() == static_cast<std::size_t>(L);
  RidgeFit fit = prefix ? fit_ridge(XL, Y.topRows(L), RidgeOptions{ridge})
                        : fit_ridge(XL(idx, Eigen::all), Y(idx, Eigen::all), RidgeOptions{ridge});
  Eigen::MatrixXd pred(t_max, Y.cols());  // rows = lags, cols = targets
  pred.topRows(L).noalias() = XL * fit.weights;
  for (Eigen::Index start = L; start < t_max; start += kChunk) {
    const Eigen::Index len = std::min<Eigen::Index>(kChunk, t_max - start);
    pred.middleRows(start, len).noalias() = evaluator.features(method, start, len) * fit.weights;
  }
  return {std::move(fit), std::move(pred)};
}

// Every target of the config on lags 0..t_max-1; rows = lags, cols = targets.
Eigen::MatrixXd target_matrix(const FitConfig& config, const Eigen::VectorXd& lags) {
  Eigen::MatrixXd Y(lags.size(), static_cast<Eigen::Index>(config.targets.size()));
  for (Eigen::Index j = 0; j < Y.cols(); ++j)
    Y.col(j) = target_values(parse_target(config.targets[static_cast<std::size_t>(j)]), config.target, lags);
  return Y;
}

}  // namespace

Predictions predict(const FitConfig& config, const std::vector<std::string>& methods, int context,
                    std::int64_t seed) {
  config.validate();
  if (context < 1) throw_bad_value("fixed-basis prediction", "context", std::to_string(context), "an integer >= 1");
  const int L = config.basis.train_context;
  const int t_max = std::max(L, context);
  const Eigen::VectorXd lags = Eigen::VectorXd::LinSpaced(t_max, 0, t_max - 1);
  const Eigen::MatrixXd Y = target_matrix(config, lags);
  const BasisEvaluator evaluator(config.basis, lags);
  const std::vector<int> idx = training_lags(L, config.train_points, seed);
  Predictions out{lags.head(context), Y.topRows(context), {}};
  for (const auto& m : methods)
    out.pred.push_back(fit_and_predict(evaluator, parse_method(m), Y, idx, L, config.ridge).second.topRows(context));
  return out;
}

std::vector<FitRow> run_fixed_basis(const FitConfig& config, int threads) {
  config.validate();
  const int L = config.basis.train_context;
  const int t_max = std::max(L, *std::max_element(config.eval_contexts.begin(), config.eval_contexts.end()));
  const Eigen::VectorXd lags = Eigen::VectorXd::LinSpaced(t_max, 0, t_max - 1);

  std::vector<Method> methods;
  for (const auto& m : config.methods) methods.push_back(parse_method(m));
  const Eigen::Index nt = static_cast<Eigen::Index>(config.targets.size());
  const Eigen::MatrixXd Y = target_matrix(config, lags);  // rows = lags 0..t_max-1, cols = targets

  // Seeds that draw the same training lags (always, when train_points = L) share one fit.
  std::vector<std::vector<int>> train_sets;
  std::vector<std::size_t> set_of_seed;
  for (auto seed : config.seeds) {
    auto t = training_lags(L, config.train_points, seed);
    auto it = std::find(train_sets.begin(), train_sets.end(), t);
    set_of_seed.push_back(static_cast<std::size_t>(it - train_sets.begin()));
    if (it == train_sets.end()) train_sets.push_back(std::move(t));
  }

  const BasisEvaluator evaluator(config.basis, lags);
  std::vector<std::vector<MethodFit>> fits(train_sets.size(), std::vector<MethodFit>(methods.size()));
  // Methods are independent: fit them on both cores. Largest first, so the slowest fit starts early.
  std::vector<std::size_t> order(methods.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return n_features(methods[a], config.basis) > n_features(methods[b], config.basis);
  });
  parallel_for(order.size(), threads, [&](std::size_t task) {
    const std::size_t mi = order[task];
    for (std::size_t si = 0; si < train_sets.size(); ++si) {
      const auto& idx = train_sets[si];
      const auto [fit, pred] = fit_and_predict(evaluator, methods[mi], Y, idx, L, config.ridge);
      MethodFit& mf = fits[si][mi];
      mf.n_features = static_cast<int>(fit.weights.rows());
      mf.cond = fit.cond;
      mf.rank = fit.rank;
      for (Eigen::Index j = 0; j < nt; ++j) {
        Scores s;
        s.train = score(pred(idx, j), Y(idx, j));
        for (int T : config.eval_contexts) s.eval.push_back(score(pred.col(j).head(T), Y.col(j).head(T)));
        mf.per_target.push_back(std::move(s));
      }
    }
  });

  std::vector<FitRow> rows;
  for (std::size_t k = 0; k < config.seeds.size(); ++k) {
    const std::size_t si = set_of_seed[k];
    for (Eigen::Index j = 0; j < nt; ++j)
      for (std::size_t mi = 0; mi < methods.size(); ++mi) {
        const MethodFit& mf = fits[si][mi];
        const Scores& s = mf.per_target[static_cast<std::size_t>(j)];
        FitRow row{config.seeds[k], config.targets[static_cast<std::size_t>(j)], config.methods[mi], L, "train",
                   mf.n_features, static_cast<int>(train_sets[si].size()), s.train.mse, s.train.r2, mf.cond, mf.rank};
        rows.push_back(row);
        for (std::size_t c = 0; c < config.eval_contexts.size(); ++c) {
          row.context = config.eval_contexts[c];
          row.split = "eval";
          row.mse = s.eval[c].mse;
          row.r2 = s.eval[c].r2;
          rows.push_back(row);
        }
      }
  }
  return rows;
}

}  // namespace ropekit
