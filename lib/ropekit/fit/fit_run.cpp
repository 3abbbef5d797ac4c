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

namespace {

// Estimated memory and time of a fixed-basis run at F frequencies, training length L and longest scored
// length T (>= L), the encodings having encoding_columns[i] feature columns: see FitConfig::cost.
Cost fit_cost_at(const FitConfig& c, double F, double L, double T, const std::vector<double>& encoding_columns = {}) {
  const double nt = static_cast<double>(c.targets.size());
  const double sets = c.train_points >= c.basis.train_context ? 1.0 : static_cast<double>(c.seeds.size());
  BasisParams b = c.basis;
  b.num_freqs = static_cast<int>(std::min<double>(F, kMaxNumFreqs));
  std::vector<double> method_bytes;
  double flops = 0, angles = 0;
  auto add = [&](double p, double own_table) {
    const double m = p + nt;  // columns of the QR
    // [X | Y] and its copy in the QR, R, [R; sqrt(lambda) I] (2 p^2), its QR, G and the eigen solver
    // (~10 p^2 in all), the predictions and one chunk of features.
    // Evaluation is streamed: per window of kChunk lags its trigonometric table, features, targets and residuals.
    method_bytes.push_back(8.0 * (2.0 * L * m + 10.0 * p * p + L * nt + 4.0 * 1024.0 * (p + nt + 2.0 * F)) +
                           own_table);
    flops += sets * (2.0 * L * m * std::min(L, m) + 8.0 * p * p * p + 2.0 * T * p * nt + 10.0 * T * p);
  };
  for (const auto& name : c.methods) add(n_features(parse_method(name), b), 0);
  // An encoding evaluates its own features on the training lags and on each chunk: its trigonometric table
  // (at most p columns), the matrix and a copy (direct sums concatenate their parts), and every angle again.
  for (double p : encoding_columns) {
    add(p, 8.0 * L * 3.0 * p);
    angles += sets * T * p;
  }
  std::sort(method_bytes.rbegin(), method_bytes.rend());
  const std::size_t concurrent = std::min<std::size_t>(method_bytes.size(), std::max(1u, std::thread::hardware_concurrency()));
  double bytes = 8.0 * L * (nt + 1.0);  // the training targets and lags
  for (std::size_t i = 0; i < concurrent; ++i) bytes += method_bytes[i];
  // Output: one row per (seed, target, method, split/context), 11 cells each, held as cells and as text.
  const double rows = static_cast<double>(c.seeds.size()) * nt *
                      static_cast<double>(c.methods.size() + encoding_columns.size()) *
                      (1.0 + static_cast<double>(c.eval_contexts.size()));
  bytes += rows * 11.0 * (40.0 + 2 * 24.0);
  // Angles: each basis evaluates its own table per window (F per lag); targets: two passes for the variances
  // and one per basis.
  const double bases = static_cast<double>(c.methods.size() + encoding_columns.size());
  return Cost{bytes, flops / kFlopsPerSecond + (T * F * bases * sets + T * nt * (2 + bases) + angles) / kElementsPerSecond};
}

// How a run names its parameters in messages: config keys ("toy.ridge", "position.theta") or, for a run
// built from `ropekit fit` options, the options ("--ridge", "--theta").
struct Names {
  std::string where;  // "config c.yaml" or "ropekit fit"
  Where keys;         // BasisParams / TargetParams parameters
  std::string section;
  bool options = false;

  std::string key(const std::string& parameter) const {
    return options ? keys.name(parameter) : section + "." + parameter;
  }
  std::string item(const std::string& parameter, std::size_t i) const {
    return options ? keys.name(parameter) : fmt::format("{}.{}[{}]", section, parameter, i);
  }
};

Names names_of(const FitConfig& c) {
  Names n;
  n.options = c.command_line;
  n.section = c.section;
  if (c.command_line) {
    n.where = c.source;
    n.keys = Where::options(c.source);
    n.keys.rename("bounded_tau", "--tau").rename("freq_index", "--target-freq-index");
    n.keys.rename("second_freq_index", "--second-freq-index").rename("seeds", "--seed");
  } else {
    n.where = "config " + c.source;
    const std::string sec = c.section.empty() ? std::string("toy") : c.section;
    n.keys = Where(n.where, sec + ".");
    n.keys.rename("theta", "position.theta").rename("bounded_tau", "position.bounded_tau");
    n.keys.rename("freq_index", sec + ".target_freq_index").rename("second_freq_index", sec + ".second_freq_index");
    n.keys.rename("drift_eps", sec + ".drift_relative_eps");
  }
  return n;
}

std::string encoding_key(const FitConfig& c, std::size_t i) {
  return c.encodings_key.rfind("--", 0) == 0 ? c.encodings_key : fmt::format("{}[{}]", c.encodings_key, i);
}

// The encodings' feature columns under the run's defaults with count = F frequencies.
std::vector<double> encoding_columns(const FitConfig& c, std::optional<int> F = {}) {
  FitConfig at = c;
  if (F) at.basis.num_freqs = *F;
  std::vector<double> out;
  for (std::size_t i = 0; i < c.encodings.size(); ++i) out.push_back(n_features(fit_encoding(at, i)));
  return out;
}

}  // namespace

int FitConfig::max_length() const {
  int t = basis.train_context;
  for (int e : eval_contexts) t = std::max(t, e);
  return t;
}

Cost FitConfig::cost() const {
  return fit_cost_at(*this, basis.num_freqs, basis.train_context, max_length(), encoding_columns(*this));
}

EncodingDefaults FitConfig::encoding_defaults() const {
  EncodingDefaults d;
  d.dim = basis.head_dim;
  d.base = basis.base;
  d.count = basis.num_freqs;
  d.gamma = basis.gamma;
  d.L = basis.train_context;
  d.bounded_tau = basis.bounded_tau;
  return d;
}

Encoding fit_encoding(const FitConfig& c, std::size_t i) {
  const Names n = names_of(c);
  const std::string key = encoding_key(c, i);
  const std::string& text = c.encodings.at(i);
  const Encoding e = parse_encoding(text, Where(n.where + ": " + key), c.encoding_defaults());
  auto refuse = [&](const std::string& constraint) {
    throw_bad_value(n.where, key, "'" + text + "'", constraint);
  };
  if (lag_dims(e) != 1)
    refuse(fmt::format("an encoding of 1-D lags: the fit is over causal lags d = 0..T-1, and {} takes {}-D lags",
                       family_name(e), lag_dims(e)));
  if (!is_relative(e))
    refuse(fmt::format("a relative encoding: {} is absolute, a function of both positions, with no basis in the lag",
                       family_name(e)));
  try {
    (void)n_features(e);  // refuses non-commuting generators; counts only (validate() sizes the run first)
  } catch (const InputError& err) {
    refuse(fmt::format("an encoding with a fixed feature basis: {}", err.what()));
  }
  return e;
}

void FitConfig::validate() const {
  const Names names = names_of(*this);
  const std::string& where = names.where;
  const Where& keys = names.keys;
  if (seeds.empty()) throw InputError(where + ": seeds is empty (must list at least one seed)");
  if (methods.empty() && encodings.empty())
    throw InputError(where + (command_line ? ": no methods or encodings (must give --encoding or --methods)"
                                           : ": no methods (must list at least one in methods or encodings, in the "
                                             "config or with --methods or --encoding)"));
  if (targets.empty()) throw InputError(where + ": no targets (must list at least one)");
  // Parameters named by their keys in the file (or by the options).
  basis.validate(keys);
  target.validate(keys);
  if (train_points < 1 || train_points > basis.train_context)
    throw_bad_value(where, names.key("train_points"), std::to_string(train_points),
                    fmt::format("an integer in [1, train_context = {}]", basis.train_context));
  if (eval_contexts.empty())
    throw InputError(where + ": " + names.key("eval_contexts") + " is empty (must list lengths >= 1)");
  for (std::size_t i = 0; i < eval_contexts.size(); ++i)
    if (eval_contexts[i] < 1)
      throw_bad_value(where, names.item("eval_contexts", i), std::to_string(eval_contexts[i]), "an integer >= 1");

  check_nonnegative(where, names.key("ridge"), ridge);
  const Eigen::VectorXd last_lag = Eigen::VectorXd::Constant(1, max_length() - 1.0);
  for (const auto& m : methods)
    if (const auto o = find_lag_overflow(parse_method(m), basis, last_lag))
      throw_bad_value(keys, "eval_contexts", std::to_string(max_length()),
                      fmt::format("at most {} for method '{}': beyond lag {} {} leaves the float64 range",
                                  static_cast<long long>(std::floor(o->limit)) + 1, m, format_number(o->limit),
                                  o->cause));
  for (std::size_t i = 0; i < encodings.size(); ++i) (void)fit_encoding(*this, i);  // parse, 1-D, relative
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
  const std::vector<double> cols = encoding_columns(*this);
  const Cost cost = fit_cost_at(*this, F, L, T, cols);
  if (cost.fits()) {
    // Within the budget: evaluate each encoding at the last lag. That refuses what features() refuses at any
    // lag (a scheme that needs the sequence length) and columns that leave float64. Only raw powers of the
    // shear time and phases grow without bound in d, both monotonically, so the last lag is the largest.
    // (Jordan chains are at most x^31/31! with x <= 2^31: 2^961/31!, inside float64.)
    for (std::size_t i = 0; i < encodings.size(); ++i) {
      const std::string key = encoding_key(*this, i), value = "'" + encodings[i] + "'";
      Features f;
      try {
        f = features(fit_encoding(*this, i), Lags::Constant(1, 1, T - 1));
      } catch (const InputError& err) {
        throw_bad_value(where, key, value, fmt::format("an encoding with a fixed feature basis: {}", err.what()));
      }
      if (!all_finite(f.values))
        throw_bad_value(where, key, value,
                        fmt::format("finite on lags 0..{0}: at lag {0} a column leaves the float64 range (shorten {1})",
                                    max_length() - 1, keys.name("eval_contexts")));
    }
    return;
  }
  const std::string for_what =
      encodings.empty() && !command_line
          ? fmt::format("for the config's methods ({}) and targets ({})", methods.size(), targets.size())
          : fmt::format("for the run's methods ({}), encodings ({}) and targets ({})", methods.size(),
                        encodings.size(), targets.size());
  // The encodings' columns at fewer frequencies: linear between F' = 1 and F (an estimate for the search; an
  // encoding whose spelling fixes its frequencies has the same count at both).
  std::vector<double> cols_at_1;
  auto cols_at = [&](double f) {
    if (cols.empty() || f == F) return cols;
    if (cols_at_1.empty()) cols_at_1 = encoding_columns(*this, 1);
    std::vector<double> out(cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i)
      out[i] = F > 1 ? cols_at_1[i] + (cols[i] - cols_at_1[i]) * (f - 1) / (F - 1) : cols[i];
    return out;
  };
  if (fit_cost_at(*this, 1, L, T, cols_at(1)).fits()) {
    const auto f = largest_fitting(1, basis.num_freqs, [&](std::int64_t v) {
      return fit_cost_at(*this, static_cast<double>(v), L, T, cols_at(static_cast<double>(v))).fits();
    });
    check_cost(keys, "num_freqs", std::to_string(basis.num_freqs), cost, std::to_string(f), for_what);
  }
  const double longest_eval = T > L ? T : 0;
  if (fit_cost_at(*this, F, 1, std::max(1.0, longest_eval), cols).fits()) {
    const auto l = largest_fitting(1, basis.train_context, [&](std::int64_t v) {
      return fit_cost_at(*this, F, static_cast<double>(v), std::max(static_cast<double>(v), longest_eval), cols).fits();
    });
    check_cost(keys, "train_context", std::to_string(basis.train_context), cost, std::to_string(l), for_what);
  }
  if (fit_cost_at(*this, F, 1, 1, cols).fits() || encodings.empty()) {
    const auto t = largest_fitting(1, max_length(), [&](std::int64_t v) {
      return fit_cost_at(*this, F, 1, static_cast<double>(v), cols).fits();
    });
    check_cost(keys, "eval_contexts", std::to_string(max_length()), cost,
               std::to_string(std::max<std::int64_t>(t, 0)), fmt::format("{} (with train_context 1)", for_what));
  }
  // Even one lag is too much: the encodings' own sizes (explicit F, blocks, dim) are to blame; name the largest.
  const auto largest = static_cast<std::size_t>(std::max_element(cols.begin(), cols.end()) - cols.begin());
  throw_bad_value(where, encoding_key(*this, largest), "'" + encodings[largest] + "'",
                  fmt::format("an encoding with fewer than its {} feature columns, {}: the run {}", cols[largest],
                              for_what, cost.excess()));
}

FitConfig fit_config(const FitOptions& o) {
  FitConfig c;
  c.source = "ropekit fit";
  c.command_line = true;
  c.encodings_key = o.encodings_key;
  c.section = "toy";
  c.methods = o.methods;
  c.encodings = o.encodings;
  c.targets = o.targets.empty() ? toy_targets() : o.targets;
  c.basis = o.basis;
  c.train_points = o.basis.train_context;
  c.eval_contexts = o.eval_contexts;
  c.seeds = o.seeds;
  c.ridge = o.ridge;
  c.target.base = o.basis.base;
  c.target.head_dim = o.basis.head_dim;
  c.target.train_context = o.basis.train_context;
  c.target.gamma = o.basis.gamma;
  c.target.freq_index = o.freq_index;
  c.target.second_freq_index = o.second_freq_index;
  c.validate();
  return c;
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
      c.source, c.section, b.num_freqs, b.head_dim, format_number(b.base), format_number(b.gamma), b.train_context,
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

// An encoding's rows from features(encoding, lags) on the same windows.
FeatureRows encoding_rows(Encoding encoding, std::string where, std::string key) {
  return [e = std::move(encoding), where = std::move(where), key = std::move(key)](const Window& w) {
    Features f = features(e, Lags(lag_window(w.first, w.count)));
    if (!all_finite(f.values))  // validate() checked the last lag; a safety net, as BasisEvaluator has
      throw InputError(fmt::format("{}: {}: a feature column leaves the float64 range on lags {}..{}", where, key,
                                   w.first, w.first + w.count - 1));
    return std::move(f.values);
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
  const Names names = names_of(config);
  for (std::size_t i = 0; i < config.encodings.size(); ++i) {
    Encoding e = fit_encoding(config, i);
    const int p = n_features(e);
    bases.push_back({config.encodings[i], p, encoding_rows(std::move(e), names.where, encoding_key(config, i))});
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
