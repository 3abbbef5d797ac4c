#include "ropekit/fit/fit_config.hpp"

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
    n.where = c.where();
    n.keys = Where::options(c.source);
    n.keys.rename("bounded_tau", "--tau").rename("freq_index", "--target-freq-index");
    n.keys.rename("second_freq_index", "--second-freq-index").rename("seeds", "--seed");
  } else {
    n.where = c.where();
    const std::string sec = c.section.empty() ? std::string("toy") : c.section;
    n.keys = Where(n.where, sec + ".");
    n.keys.rename("theta", "position.theta").rename("bounded_tau", "position.bounded_tau");
    n.keys.rename("freq_index", sec + ".target_freq_index").rename("second_freq_index", sec + ".second_freq_index");
    n.keys.rename("drift_eps", sec + ".drift_relative_eps");
  }
  return n;
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

std::string FitConfig::where() const { return command_line ? source : "config " + source; }

std::string FitConfig::encoding_key(std::size_t i) const {
  return encodings_key.rfind("--", 0) == 0 ? encodings_key : fmt::format("{}[{}]", encodings_key, i);
}

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
  const std::string key = c.encoding_key(i);
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
  if (seeds.empty()) throw InputError(where + ": seeds = [] (must be at least one seed)");
  if (methods.empty() && encodings.empty())
    throw InputError(where + (command_line ? ": no methods or encodings (must give --encoding or --methods)"
                                           : ": no methods (must list at least one in methods or encodings, in the "
                                             "config or with --methods or --encoding)"));
  if (targets.empty()) throw InputError(where + ": targets = [] (must be at least one target)");
  // Parameters named by their keys in the file (or by the options).
  basis.validate(keys);
  target.validate(keys);
  if (train_points < 1 || train_points > basis.train_context)
    throw_bad_value(where, names.key("train_points"), std::to_string(train_points),
                    fmt::format("an integer in [1, train_context = {}]", basis.train_context));
  if (eval_contexts.empty())
    throw InputError(where + ": " + names.key("eval_contexts") + " = [] (must be at least one length >= 1)");
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
      const std::string key = encoding_key(i), value = "'" + encodings[i] + "'";
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
  throw_bad_value(where, encoding_key(largest), "'" + encodings[largest] + "'",
                  fmt::format("an encoding with fewer than its {} feature columns, {}: the run {}", cols[largest],
                              for_what, cost.excess()));
}

void FitOptions::validate() const {
  const Where where = Where::options("ropekit fit");
  if (encodings.empty() && methods.empty())
    throw InputError(fmt::format("ropekit fit: {} = none (must list at least one encoding, or give methods)",
                                 encodings_key));
  if (tau && *tau != "bounded" && *tau != "raw") throw_bad_value(where, "tau", "'" + *tau + "'", "bounded or raw");
  if (threads < 0) throw_bad_value(where, "threads", std::to_string(threads), "an integer >= 0 (0: all cores)");
  if (basis.train_context < 1)
    throw_bad_value(where, "train_context", std::to_string(basis.train_context),
                    fmt::format("an integer in [1, {}]", FitConfig::kMaxLength));
  for (int T : eval_contexts)
    if (T < 1)
      throw_bad_value(where, "eval_contexts", std::to_string(T), fmt::format("an integer in [1, {}]", FitConfig::kMaxLength));
  for (auto s : seeds)
    if (s < 0) throw_bad_value(where, "seed", std::to_string(s), "an integer in [0, 9223372036854775807]");
}

FitConfig fit_config(const FitOptions& o) {
  o.validate();
  FitConfig c;
  c.source = "ropekit fit";
  c.command_line = true;
  c.encodings_key = o.encodings_key;
  c.section = "toy";
  c.methods = o.methods;
  c.encodings = o.encodings;
  c.targets = o.targets.empty() ? toy_targets() : o.targets;
  c.basis = o.basis;
  if (o.tau) c.basis.bounded_tau = *o.tau == "bounded";
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

}  // namespace ropekit
