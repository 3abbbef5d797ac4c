#include "ropekit/fit/fit_run.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/finite.hpp"
#include "ropekit/core/cancel.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/fit/linear_fit.hpp"
#include "ropekit/fit/metrics.hpp"

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

// Lags per evaluation window: 512 x 129 doubles = 0.5 MiB; 8192 lags make 14 tasks, so no window runs alone long.
constexpr Eigen::Index kChunk = 512;

struct Qualities {
  FitQuality train;
  std::vector<FitQuality> eval;  // one per eval context
};

struct MethodFit {
  int n_features = 0;
  double cond = 0;
  int rank = 0;
  std::vector<Qualities> per_target;
};

Eigen::VectorXd lag_window(Eigen::Index first, Eigen::Index count) {
  return Eigen::VectorXd::LinSpaced(count, static_cast<double>(first), static_cast<double>(first + count - 1));
}

// A window of lags first..first+count-1 and, when the run has methods, its trigonometric table, computed once and
// read by every method (issue 9: the methods share the sin/cos work; no table of the whole grid is ever held).
// The vectorised sin/cos treat the last (length mod the vector width) lags with the scalar libm, so windows of
// lengths that are multiples of 8 (L and kChunk in the paper's runs) give the bits of one table of the whole grid.
struct Window {
  Eigen::Index first = 0, count = 0;
  std::optional<BasisEvaluator> table;

  Window(const BasisParams& params, Eigen::Index first_, Eigen::Index count_, bool with_table)
      : first(first_), count(count_) {
    if (with_table) table.emplace(params, lag_window(first, count));
  }
};

// The feature rows of one basis (a method or an encoding) on a window.
using FeatureRows = std::function<Eigen::MatrixXd(const Window&)>;

FeatureRows method_rows(const Method& method) {
  return [method](const Window& w) { return w.table->features(method); };
}

// An encoding's rows from features(encoding, lags) on the same windows, in pieces of kFeaturePiece lags with a look
// at the cancel flag between them (a 2^19-lag training window took 10 s in one call, deaf to Ctrl-C). The pieces are
// multiples of 8 lags, so the vectorised sin/cos leave the same last lags to libm: the bits of one call.
constexpr Eigen::Index kFeaturePiece = 32768;
FeatureRows encoding_rows(Encoding encoding, std::string where, std::string key) {
  return [e = std::move(encoding), where = std::move(where), key = std::move(key)](const Window& w) {
    Eigen::MatrixXd X;
    for (Eigen::Index a = 0; a < w.count; a += kFeaturePiece) {
      check_cancelled();
      const Eigen::Index n = std::min(kFeaturePiece, w.count - a);
      Features f = features(e, Lags(lag_window(w.first + a, n)));
      if (n == w.count) {
        X = std::move(f.values);
        break;
      }
      if (a == 0) X.resize(w.count, f.values.cols());
      X.middleRows(a, n) = f.values;
    }
    if (!all_finite(X))  // validate() checked the last lag; a safety net, as BasisEvaluator has
      throw InputError(fmt::format("{}: {}: a feature column leaves the float64 range on lags {}..{}", where, key,
                                   w.first, w.first + w.count - 1));
    return X;
  };
}

// Fits a basis on the rows `idx` (inside 0..L-1) of Y and predicts every lag 0..t_max-1 (predict(), for plots).
std::pair<RidgeFit, Eigen::MatrixXd> fit_and_predict(const BasisParams& params, const FeatureRows& rows,
                                                     Eigen::Index t_max, const Eigen::MatrixXd& Y,
                                                     const std::vector<int>& idx, int L, double ridge) {
  const Eigen::MatrixXd XL = rows(Window(params, 0, L, true));  // rows = lags 0..L-1, cols = features
  const bool prefix = idx.size() == static_cast<std::size_t>(L);
  RidgeFit fit = prefix ? fit_ridge(XL, Y.topRows(L), RidgeOptions{ridge})
                        : fit_ridge(XL(idx, Eigen::all), Y(idx, Eigen::all), RidgeOptions{ridge});
  Eigen::MatrixXd pred(t_max, Y.cols());  // rows = lags, cols = targets
  pred.topRows(L).noalias() = XL * fit.weights;
  for (Eigen::Index start = L; start < t_max; start += kChunk) {
    const Eigen::Index len = std::min<Eigen::Index>(kChunk, t_max - start);
    pred.middleRows(start, len).noalias() = rows(Window(params, start, len, true)) * fit.weights;
  }
  return {std::move(fit), std::move(pred)};
}

// Every target of the config on the given lags; rows = lags, cols = targets, one task per target.
Eigen::MatrixXd target_matrix(const FitConfig& config, const Eigen::VectorXd& lags, int threads = 1) {
  Eigen::MatrixXd Y(lags.size(), static_cast<Eigen::Index>(config.targets.size()));
  parallel_for(config.targets.size(), threads, [&](std::size_t j) {
    Y.col(static_cast<Eigen::Index>(j)) = target_values(parse_target(config.targets[j]), config.target, lags);
  });
  return Y;
}

// Neumaier's compensated sum: the error stays a few ulps of the sum of |terms| whatever their number (2^27 lags).
struct CompensatedSum {
  double sum = 0, carry = 0;
  void add(double x) {
    const double t = sum + x;
    carry += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double value() const { return sum + carry; }
};

// The scored lengths in increasing order, and for each config context its place among them.
struct Boundaries {
  std::vector<Eigen::Index> ends;  // distinct T, increasing
  std::vector<std::size_t> of_context;
};
Boundaries boundaries_of(const std::vector<int>& contexts) {
  Boundaries b;
  for (int T : contexts) b.ends.push_back(T);
  std::sort(b.ends.begin(), b.ends.end());
  b.ends.erase(std::unique(b.ends.begin(), b.ends.end()), b.ends.end());
  for (int T : contexts)
    b.of_context.push_back(static_cast<std::size_t>(std::lower_bound(b.ends.begin(), b.ends.end(), T) - b.ends.begin()));
  return b;
}

// Streams f(first, rows) over the windows [0, L), then chunks of kChunk up to t_max, each as a matrix of rows.
// Stops between windows once the caller's cancel flag is set (cancel.hpp).
template <class F>
void for_each_window(Eigen::Index L, Eigen::Index t_max, F&& f) {
  if (L > 0) f(Eigen::Index{0}, std::min(L, t_max));
  for (Eigen::Index start = L; start < t_max; start += kChunk) {
    check_cancelled();
    f(start, std::min<Eigen::Index>(kChunk, t_max - start));
  }
}

// The targets on a window of lags: held for the whole grid when it is small (every basis reads the same values;
// up to 2^23 doubles, 64 MiB), else computed per window (long grids: memory stays bounded).
class TargetWindows {
 public:
  TargetWindows(const FitConfig& config, Eigen::Index t_max, int threads) : config_(config) {
    if (static_cast<double>(t_max) * static_cast<double>(config.targets.size()) <= kHeldTargetValues)
      all_ = target_matrix(config, lag_window(0, t_max), threads);
  }
  Eigen::MatrixXd operator()(Eigen::Index first, Eigen::Index count) const {
    if (all_.size() > 0) return all_.middleRows(first, count);
    return target_matrix(config_, lag_window(first, count));
  }

 private:
  static constexpr double kHeldTargetValues = 1 << 23;
  const FitConfig& config_;
  Eigen::MatrixXd all_;
};

// Calls f(a, n, at_boundary) for the consecutive segments [a, a + n) of the window [first, first + count) (a counted
// from first) split at the scored lengths inside it; at_boundary: the segment ends at a scored length.
template <class F>
void for_each_segment(const Boundaries& b, Eigen::Index first, Eigen::Index count, F&& f) {
  Eigen::Index pos = 0;
  for (auto it = std::upper_bound(b.ends.begin(), b.ends.end(), first); it != b.ends.end() && *it <= first + count;
       ++it) {
    f(pos, *it - first - pos, true);
    pos = *it - first;
  }
  if (pos < count) f(pos, count - pos, false);
}

// Running sums of a column over lags 0..t-1, read off at the scored lengths: each window's segments (split at the
// scored lengths) are summed by Eigen (vectorised) and added, window after window, to a compensated sum, so the error
// stays a few ulps of the segment sums whatever the number of windows.
class PrefixSums {
 public:
  PrefixSums(const Boundaries& b) : b_(b), at_(b.ends.size(), 0.0) {}
  /// Adds the window [first, first + count) of the lags, which must follow the last one added; part(a, n) is the sum
  /// over its rows [a, a + n), called for each segment in order.
  template <class Part>
  void add(Eigen::Index first, Eigen::Index count, Part&& part) {
    for_each_segment(b_, first, count, [&](Eigen::Index a, Eigen::Index n, bool at_boundary) {
      running_.add(part(a, n));
      if (at_boundary) at_[next_++] = running_.value();
    });
  }
  double at(std::size_t c) const { return at_[c]; }

 private:
  const Boundaries& b_;
  std::vector<double> at_;
  std::size_t next_ = 0;
  CompensatedSum running_;
};

// For each target and scored length T: the population variance of y over lags 0..T-1, in two streamed passes (the
// means, then the centred squares), each a compensated sum of window sums: as accurate as fit_quality's two passes.
std::vector<std::vector<double>> target_variances(const TargetWindows& targets, const Boundaries& b, Eigen::Index nt,
                                                  Eigen::Index L) {
  const std::size_t nb = b.ends.size();
  const Eigen::Index t_max = b.ends.back();
  std::vector<std::vector<double>> mean(static_cast<std::size_t>(nt), std::vector<double>(nb)), var = mean;
  std::vector<PrefixSums> sums(static_cast<std::size_t>(nt), PrefixSums(b));
  // Centred squares: one running sum per (target, length), each fed only with lags below its length.
  std::vector<std::vector<CompensatedSum>> squares(static_cast<std::size_t>(nt), std::vector<CompensatedSum>(nb));
  for_each_window(L, t_max, [&](Eigen::Index first, Eigen::Index count) {
    const Eigen::MatrixXd Y = targets(first, count);
    for (Eigen::Index j = 0; j < nt; ++j)
      sums[static_cast<std::size_t>(j)].add(first, count, [&](Eigen::Index a, Eigen::Index n) {
        return Y.col(j).segment(a, n).sum();
      });
  });
  for (std::size_t j = 0; j < static_cast<std::size_t>(nt); ++j)
    for (std::size_t c = 0; c < nb; ++c) mean[j][c] = sums[j].at(c) / static_cast<double>(b.ends[c]);
  for_each_window(L, t_max, [&](Eigen::Index first, Eigen::Index count) {
    const Eigen::MatrixXd Y = targets(first, count);
    for (Eigen::Index j = 0; j < nt; ++j)
      for (std::size_t c = 0; c < nb; ++c) {
        const Eigen::Index n = std::min(count, b.ends[c] - first);
        if (n <= 0) continue;
        const double m = mean[static_cast<std::size_t>(j)][c];
        squares[static_cast<std::size_t>(j)][c].add((Y.col(j).head(n).array() - m).square().sum());
      }
  });
  for (std::size_t j = 0; j < static_cast<std::size_t>(nt); ++j)
    for (std::size_t c = 0; c < nb; ++c) var[j][c] = squares[j][c].value() / static_cast<double>(b.ends[c]);
  return var;
}

}  // namespace

Predictions predict(const FitConfig& config, const std::vector<std::string>& methods, int context,
                    std::int64_t seed) {
  config.validate();
  if (context < 1 || context > FitConfig::kMaxPredictLength)
    throw_bad_value("fixed-basis prediction", "context", std::to_string(context),
                    fmt::format("an integer in [1, {}] (predictions of every lag are held for plots)", FitConfig::kMaxPredictLength));
  const int L = config.basis.train_context;
  const int t_max = std::max(L, context);
  const Eigen::VectorXd lags = Eigen::VectorXd::LinSpaced(t_max, 0, t_max - 1);
  const Eigen::MatrixXd Y = target_matrix(config, lags);
  const std::vector<int> idx = training_lags(L, config.train_points, seed);
  Predictions out{lags.head(context), Y.topRows(context), {}};
  for (const auto& m : methods)
    out.pred.push_back(fit_and_predict(config.basis, method_rows(parse_method(m)), t_max, Y, idx, L, config.ridge)
                           .second.topRows(context));
  return out;
}

std::vector<FitRow> run_fixed_basis(const FitConfig& config, int threads) {
  config.validate();
  const int L = config.basis.train_context;
  const Eigen::Index t_max = config.max_length();

  // Every basis to fit: the methods, then the encodings, each with its name as written and its column count.
  struct Basis {
    std::string name;
    int n_features = 0;
    FeatureRows rows;
  };
  std::vector<Basis> bases;
  for (const auto& m : config.methods) {
    const Method method = parse_method(m);
    bases.push_back({m, n_features(method, config.basis), method_rows(method)});
  }
  for (std::size_t i = 0; i < config.encodings.size(); ++i) {
    Encoding e = fit_encoding(config, i);
    const int p = n_features(e);
    bases.push_back({config.encodings[i], p, encoding_rows(std::move(e), config.where(), config.encoding_key(i))});
  }
  const bool with_table = !config.methods.empty();
  const Eigen::Index nt = static_cast<Eigen::Index>(config.targets.size());
  const Boundaries bounds = boundaries_of(config.eval_contexts);
  const TargetWindows targets(config, t_max, threads);
  const Eigen::MatrixXd YL = targets(0, L);  // the training lags 0..L-1
  const auto variances = target_variances(targets, bounds, nt, L);

  // Seeds that draw the same training lags (always, when train_points = L) share one fit.
  std::vector<std::vector<int>> train_sets;
  std::vector<std::size_t> set_of_seed;
  for (auto seed : config.seeds) {
    auto t = training_lags(L, config.train_points, seed);
    auto it = std::find(train_sets.begin(), train_sets.end(), t);
    set_of_seed.push_back(static_cast<std::size_t>(it - train_sets.begin()));
    if (it == train_sets.end()) train_sets.push_back(std::move(t));
  }
  const std::size_t ns = train_sets.size();

  // Squared residuals per (basis, training set, target), read off at each scored length. Each window's segment
  // sums are computed by whichever thread takes the window, then added here in window order, so the rows do not
  // depend on the thread count.
  std::vector<PrefixSums> sse(bases.size() * ns * static_cast<std::size_t>(nt), PrefixSums(bounds));
  // Appends a window's segment sums of R (rows = the window's lags, cols = targets) to parts, in the order add_parts
  // reads them back.
  auto append_parts = [&](const Eigen::MatrixXd& R, Eigen::Index first, std::vector<double>& parts) {
    for (Eigen::Index j = 0; j < nt; ++j)
      for_each_segment(bounds, first, R.rows(), [&](Eigen::Index a, Eigen::Index n, bool) {
        parts.push_back(R.col(j).segment(a, n).squaredNorm());
      });
  };
  auto add_parts = [&](std::size_t mi, std::size_t si, Eigen::Index first, Eigen::Index count, const double*& part) {
    for (Eigen::Index j = 0; j < nt; ++j)
      sse[(mi * ns + si) * static_cast<std::size_t>(nt) + static_cast<std::size_t>(j)].add(
          first, count, [&](Eigen::Index, Eigen::Index) { return *part++; });
  };

  // 1. Fits, one task per basis, largest first so the slowest starts early: the training design (lags 0..L-1, the
  // first scored window) stays in memory for the fit, the training scores and that window's residuals.
  std::vector<std::vector<MethodFit>> fits(ns, std::vector<MethodFit>(bases.size()));
  std::vector<std::vector<Eigen::MatrixXd>> weights(bases.size(), std::vector<Eigen::MatrixXd>(ns));
  std::vector<std::vector<double>> first_parts(bases.size());
  std::vector<std::size_t> order(bases.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bases[a].n_features > bases[b].n_features; });
  const Window train_window(config.basis, 0, L, with_table);
  parallel_for(order.size(), threads, [&](std::size_t task) {
    const std::size_t mi = order[task];
    const Eigen::MatrixXd XL = bases[mi].rows(train_window);
    for (std::size_t si = 0; si < ns; ++si) {
      const auto& idx = train_sets[si];
      const RidgeFit fit = idx.size() == static_cast<std::size_t>(L)
                               ? fit_ridge(XL, YL, RidgeOptions{config.ridge})
                               : fit_ridge(XL(idx, Eigen::all), YL(idx, Eigen::all), RidgeOptions{config.ridge});
      const Eigen::MatrixXd predL = XL * fit.weights;
      append_parts(predL - YL, 0, first_parts[mi]);
      MethodFit& mf = fits[si][mi];
      mf.n_features = static_cast<int>(fit.weights.rows());
      mf.cond = fit.cond;
      mf.rank = fit.rank;
      for (Eigen::Index j = 0; j < nt; ++j) mf.per_target.push_back({fit_quality(predL(idx, j), YL(idx, j)), {}});
      weights[mi][si] = fit.weights;
    }
  });
  for (std::size_t mi = 0; mi < bases.size(); ++mi) {
    const double* part = first_parts[mi].data();
    for (std::size_t si = 0; si < ns; ++si) add_parts(mi, si, 0, L, part);
  }

  // 2. The evaluation lags L..t_max-1 in windows of kChunk, one task per window: its trigonometric table once for
  // every method, then each basis's features, predictions and residuals. Windows go in batches, so the held segment
  // sums stay bounded at any length (2^27 lags).
  constexpr std::size_t kBatch = 64;
  const Eigen::Index n_windows = (t_max - L + kChunk - 1) / kChunk;
  for (Eigen::Index batch = 0; batch < n_windows; batch += static_cast<Eigen::Index>(kBatch)) {
    const std::size_t in_batch = static_cast<std::size_t>(std::min<Eigen::Index>(kBatch, n_windows - batch));
    std::vector<std::vector<double>> parts(in_batch);
    auto first_of = [&](std::size_t w) { return L + (batch + static_cast<Eigen::Index>(w)) * kChunk; };
    auto count_of = [&](std::size_t w) { return std::min<Eigen::Index>(kChunk, t_max - first_of(w)); };
    parallel_for(in_batch, threads, [&](std::size_t w) {
      const Window window(config.basis, first_of(w), count_of(w), with_table);
      const Eigen::MatrixXd Y = targets(window.first, window.count);
      for (std::size_t mi = 0; mi < bases.size(); ++mi) {
        const Eigen::MatrixXd X = bases[mi].rows(window);
        for (std::size_t si = 0; si < ns; ++si) append_parts(X * weights[mi][si] - Y, window.first, parts[w]);
      }
    });
    for (std::size_t w = 0; w < in_batch; ++w) {
      const double* part = parts[w].data();
      for (std::size_t mi = 0; mi < bases.size(); ++mi)
        for (std::size_t si = 0; si < ns; ++si) add_parts(mi, si, first_of(w), count_of(w), part);
    }
  }

  for (std::size_t si = 0; si < ns; ++si)
    for (std::size_t mi = 0; mi < bases.size(); ++mi)
      for (Eigen::Index j = 0; j < nt; ++j) {
        const PrefixSums& sums = sse[(mi * ns + si) * static_cast<std::size_t>(nt) + static_cast<std::size_t>(j)];
        Qualities& s = fits[si][mi].per_target[static_cast<std::size_t>(j)];
        for (std::size_t k = 0; k < config.eval_contexts.size(); ++k) {
          const std::size_t c = bounds.of_context[k];
          const double mse = sums.at(c) / static_cast<double>(bounds.ends[c]);
          s.eval.push_back({mse, 1.0 - mse / std::max(variances[static_cast<std::size_t>(j)][c], kVarianceFloor)});
        }
      }

  std::vector<FitRow> rows;
  for (std::size_t k = 0; k < config.seeds.size(); ++k) {
    const std::size_t si = set_of_seed[k];
    for (Eigen::Index j = 0; j < nt; ++j)
      for (std::size_t mi = 0; mi < bases.size(); ++mi) {
        const MethodFit& mf = fits[si][mi];
        const Qualities& s = mf.per_target[static_cast<std::size_t>(j)];
        FitRow row{config.seeds[k], config.targets[static_cast<std::size_t>(j)], bases[mi].name, L, "train",
                   mf.n_features, static_cast<int>(train_sets[si].size()), s.train.mse, s.train.r2, mf.cond, mf.rank,
                   {}};
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
