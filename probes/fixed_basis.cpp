#include "probes/fixed_basis.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/fit/linear_fit.hpp"
#include "ropekit/fit/metrics.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

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

Table fit_rows_table(const std::vector<FitRow>& rows) {
  Table t;
  t.columns = {"seed", "target", "method", "context", "split", "n_features", "n_train", "mse", "r2", "cond", "rank"};
  for (const auto& r : rows)
    t.add_row({r.seed, r.target, r.method, std::int64_t{r.context}, r.split, std::int64_t{r.n_features},
               std::int64_t{r.n_train}, r.mse, r.r2, r.cond, std::int64_t{r.rank}});
  return t;
}

std::vector<FitRow> read_fit_rows(const CsvData& csv, std::string_view source) {
  auto find = [&](std::initializer_list<std::string_view> names, bool required) -> std::optional<std::size_t> {
    for (auto n : names)
      for (std::size_t i = 0; i < csv.columns.size(); ++i)
        if (csv.columns[i] == n) return i;
    if (required)
      throw InputError(fmt::format("{}: no column '{}' (must have seed, target/task/benchmark, method, context, "
                                   "split, mse)",
                                   source, *names.begin()));
    return std::nullopt;
  };
  const auto c_seed = find({"seed"}, true), c_target = find({"target", "task", "benchmark"}, true),
             c_method = find({"method"}, true), c_context = find({"context"}, true), c_split = find({"split"}, true),
             c_mse = find({"mse"}, true);
  const auto c_r2 = find({"r2"}, false), c_nf = find({"n_features"}, false), c_nt = find({"n_train"}, false),
             c_cond = find({"cond"}, false), c_rank = find({"rank"}, false);
  std::vector<FitRow> rows;
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    const auto& cells = csv.rows[r];
    auto num = [&](std::size_t col) {
      auto v = parse_double(cells[col]);
      if (!v) throw_bad_value(fmt::format("{} row {}", source, r + 2), csv.columns[col], "'" + cells[col] + "'", "a number");
      return *v;
    };
    auto integer = [&](std::size_t col) {
      auto v = parse_int(cells[col]);
      if (!v) throw_bad_value(fmt::format("{} row {}", source, r + 2), csv.columns[col], "'" + cells[col] + "'", "an integer");
      return *v;
    };
    FitRow row;
    row.seed = integer(*c_seed);
    row.target = cells[*c_target];
    row.method = cells[*c_method];
    row.context = static_cast<int>(integer(*c_context));
    row.split = cells[*c_split];
    row.mse = num(*c_mse);
    if (c_r2 && !cells[*c_r2].empty()) row.r2 = num(*c_r2);
    if (c_nf) row.n_features = static_cast<int>(integer(*c_nf));
    if (c_nt) row.n_train = static_cast<int>(integer(*c_nt));
    if (c_cond) row.cond = num(*c_cond);
    if (c_rank) row.rank = static_cast<int>(integer(*c_rank));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ropekit
