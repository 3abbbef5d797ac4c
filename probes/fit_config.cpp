#include "probes/fit_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

namespace {

constexpr int kMaxLength = 1 << 20;  // 2^20 lags x 129 columns of doubles is about 1 GiB

// Typed reads of YAML scalars with messages "config <src>: <key> = <value> (must be <constraint>)".
class Reader {
 public:
  explicit Reader(std::string source) : where_("config " + std::move(source)) {}
  const std::string& where() const { return where_; }

  std::string scalar(const YAML::Node& n, const std::string& key, std::string_view constraint) const {
    if (!n.IsScalar())
      throw_bad_value(where_, key, n.IsSequence() ? "a list" : n.IsMap() ? "a mapping" : "empty", constraint);
    return n.Scalar();
  }

  double real(const YAML::Node& n, const std::string& key, std::string_view constraint) const {
    const std::string s = scalar(n, key, constraint);
    if (auto v = special(s)) return *v;
    auto v = parse_double(s);
    if (!v) throw_bad_value(where_, key, fmt::format("'{}'", s), constraint);
    return *v;
  }

  std::int64_t integer(const YAML::Node& n, const std::string& key, std::string_view constraint) const {
    const std::string s = scalar(n, key, constraint);
    if (auto i = parse_int(s)) return *i;
    auto v = special(s);
    if (!v) v = parse_double(s);
    // An integral real such as 1024.0 is accepted; 1024.5 or nan is not (the reference would truncate).
    if (!v || !std::isfinite(*v) || std::floor(*v) != *v || std::fabs(*v) > 9e15)
      throw_bad_value(where_, key, fmt::format("'{}'", s), constraint);
    return static_cast<std::int64_t>(*v);
  }

  int bounded_int(const YAML::Node& n, const std::string& key, std::int64_t min, std::string_view constraint) const {
    const auto v = integer(n, key, constraint);
    if (v < min || v > std::numeric_limits<int>::max()) throw_bad_value(where_, key, std::to_string(v), constraint);
    return static_cast<int>(v);
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    std::string s = scalar(n, key, "true or false");
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
    if (s == "false" || s == "no" || s == "off" || s == "0") return false;
    throw_bad_value(where_, key, fmt::format("'{}'", n.Scalar()), "true or false");
  }

  std::vector<std::string> names(const YAML::Node& n, const std::string& key) const {
    if (!n.IsSequence()) throw_bad_value(where_, key, n.IsScalar() ? "'" + n.Scalar() + "'" : "not a list", "a list of names");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(scalar(n[i], fmt::format("{}[{}]", key, i), "a name"));
    return out;
  }

  YAML::Node require(const YAML::Node& section, const std::string& section_name, const std::string& key,
                     std::string_view constraint) const {
    YAML::Node n = section[key];
    if (!n.IsDefined() || n.IsNull())
      throw InputError(fmt::format("{}: {}.{} is missing (must be set: {})", where_, section_name, key, constraint));
    return n;
  }

 private:
  static std::optional<double> special(const std::string& s) {
    if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
    if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf") return std::numeric_limits<double>::infinity();
    if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return -std::numeric_limits<double>::infinity();
    return std::nullopt;
  }
  std::string where_;
};

// yaml-cpp keeps every entry of a mapping and answers lookups with the first; PyYAML (the reference's
// reader) keeps the last. A key given twice is ambiguous: refuse it, naming both lines.
void check_unique_keys(const YAML::Node& node, const std::string& where, const std::string& path) {
  if (node.IsMap()) {
    std::map<std::string, std::string> line_of;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string("(complex key)");
      const std::string line = fmt::format("line {}, column {}", it->first.Mark().line + 1, it->first.Mark().column + 1);
      const std::string full = path.empty() ? key : path + "." + key;
      if (auto seen = line_of.find(key); seen != line_of.end())
        throw_bad_value(where, full, fmt::format("given twice ({} and {})", seen->second, line),
                        "given once: YAML readers disagree on which one counts (yaml-cpp keeps the first, "
                        "PyYAML the last)");
      line_of.emplace(key, line);
      check_unique_keys(it->second, where, full);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) check_unique_keys(node[i], where, fmt::format("{}[{}]", path, i));
  }
}

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

FitConfig parse_fit_config(std::string_view yaml_text, std::string_view source, const ConfigOverrides& overrides) {
  Reader rd{std::string(source)};
  const auto& where = rd.where();
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: malformed YAML at line {}, column {}: {}", where, e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw InputError(where + ": not a YAML mapping (must have seeds, methods and a toy or benchmarks section)");
  check_unique_keys(root, where, "");

  FitConfig c;
  c.source = std::string(source);
  const bool has_toy = root["toy"].IsDefined() && !root["toy"].IsNull();
  const bool has_bench = root["benchmarks"].IsDefined() && !root["benchmarks"].IsNull();
  if (overrides.section) {
    if (*overrides.section != "toy" && *overrides.section != "benchmarks")
      throw_bad_value("ropekit fit", "--section", "'" + *overrides.section + "'", "toy or benchmarks");
    if (!root[*overrides.section].IsDefined())
      throw InputError(fmt::format("{}: no '{}' section (asked for with --section)", where, *overrides.section));
    c.section = *overrides.section;
  } else if (has_toy && has_bench) {
    throw InputError(where + ": has both 'toy' and 'benchmarks' sections (choose one with --section)");
  } else if (has_toy || has_bench) {
    c.section = has_toy ? "toy" : "benchmarks";
  } else {
    throw InputError(where + ": neither a 'toy' nor a 'benchmarks' section (must have one)");
  }
  const YAML::Node sec = root[c.section];
  if (!sec.IsMap()) throw InputError(fmt::format("{}: '{}' is not a mapping", where, c.section));
  const YAML::Node pos = root["position"];
  if (pos.IsDefined() && !pos.IsNull() && !pos.IsMap()) throw InputError(where + ": 'position' is not a mapping");
  // A key that is absent or null: nullopt (a default-constructed YAML::Node would count as defined).
  auto opt = [](const YAML::Node& parent, const char* key) -> std::optional<YAML::Node> {
    if (!parent.IsDefined() || !parent.IsMap()) return std::nullopt;
    const YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return std::nullopt;
    return n;
  };
  const std::string& s = c.section;

  // seeds (default [0]) and methods.
  if (auto n = opt(root, "seeds"); n) {
    if (!n->IsSequence()) throw_bad_value(where, "seeds", "not a list", "a list of integers");
    for (std::size_t i = 0; i < n->size(); ++i) c.seeds.push_back(rd.integer((*n)[i], fmt::format("seeds[{}]", i), "an integer"));
  } else {
    c.seeds = {0};
  }
  if (overrides.methods) {
    c.methods = *overrides.methods;
  } else {
    for (const char* key : {"methods", "ablation_methods", "toy_extra_methods"})
      if (auto n = opt(root, key); n)
        for (auto& m : rd.names(*n, key)) c.methods.push_back(std::move(m));
  }
  if (overrides.targets) c.targets = *overrides.targets;
  else c.targets = (s == "toy") ? toy_targets() : structured_targets();

  // Basis and target parameters.
  c.basis.train_context = rd.bounded_int(rd.require(sec, s, "train_context", "an integer >= 1"), s + ".train_context", 1, "an integer >= 1");
  if (c.basis.train_context > kMaxLength)
    throw_bad_value(where, s + ".train_context", std::to_string(c.basis.train_context), fmt::format("<= {}", kMaxLength));
  c.basis.num_freqs = rd.bounded_int(rd.require(sec, s, "num_freqs", "an integer >= 1"), s + ".num_freqs", 1, "an integer >= 1");
  {
    const auto h = rd.integer(rd.require(sec, s, "head_dim", "a positive even integer"), s + ".head_dim", "a positive even integer");
    if (h <= 0 || h % 2 != 0 || h > 1'000'000) throw_bad_value(where, s + ".head_dim", std::to_string(h), "a positive even integer");
    c.basis.head_dim = static_cast<int>(h);
  }
  if (auto n = opt(pos, "theta"); n) c.basis.theta = rd.real(*n, "position.theta", "finite and > 0");
  if (auto n = opt(pos, "bounded_tau"); n) c.basis.bounded_tau = rd.boolean(*n, "position.bounded_tau");
  std::string gamma_key = s + ".gamma";  // falls back to position.gamma_min, then 1e-4
  if (auto n = opt(sec, "gamma"); n) c.basis.gamma = rd.real(*n, gamma_key, "finite and >= 0");
  else if (auto g = opt(pos, "gamma_min"); g)
    gamma_key = "position.gamma_min", c.basis.gamma = rd.real(*g, gamma_key, "finite and >= 0");
  check_positive(where, "position.theta", c.basis.theta);
  check_nonnegative(where, gamma_key, c.basis.gamma);

  c.target.theta = c.basis.theta;
  c.target.head_dim = c.basis.head_dim;
  c.target.train_context = c.basis.train_context;
  c.target.gamma = c.basis.gamma;
  if (auto n = opt(sec, "target_freq_index"); n)
    c.target.freq_index = rd.bounded_int(*n, s + ".target_freq_index", 0, "an integer >= 0");
  if (auto n = opt(sec, "second_freq_index"); n)
    c.target.second_freq_index = rd.bounded_int(*n, s + ".second_freq_index", 0, "an integer >= 0");
  if (auto n = opt(sec, "scaled_c"); n) c.target.scaled_c = rd.real(*n, s + ".scaled_c", "finite and >= 0");
  if (auto n = opt(sec, "drift_relative_eps"); n)
    c.target.drift_eps = rd.real(*n, s + ".drift_relative_eps", "finite");
  check_nonnegative(where, s + ".scaled_c", c.target.scaled_c);
  check_finite(where, s + ".drift_relative_eps", c.target.drift_eps);

  // Fit and scoring.
  c.ridge = rd.real(rd.require(sec, s, "ridge", "finite and >= 0"), s + ".ridge", "finite and >= 0");
  check_nonnegative(where, s + ".ridge", c.ridge);
  c.train_points = c.basis.train_context;
  if (auto n = opt(sec, "train_points"); n)
    c.train_points = rd.bounded_int(*n, s + ".train_points", 1,
                                    fmt::format("an integer in [1, train_context = {}]", c.basis.train_context));
  {
    const YAML::Node ev = rd.require(sec, s, "eval_contexts", "a list of lengths >= 1");
    if (!ev.IsSequence()) throw_bad_value(where, s + ".eval_contexts", "not a list", "a list of lengths >= 1");
    for (std::size_t i = 0; i < ev.size(); ++i)
      c.eval_contexts.push_back(rd.bounded_int(ev[i], fmt::format("{}.eval_contexts[{}]", s, i), 1, "an integer >= 1"));
  }
  c.validate();
  return c;
}

FitConfig load_fit_config(const std::string& path, const ConfigOverrides& overrides) {
  // 1 MiB: the paper's configs are 2 KB; yaml-cpp takes about 140 bytes of memory per byte of a long list
  // (a 16 MiB one took 2.2 GB and 10 s), so the cap bounds memory to about 150 MB.
  return parse_fit_config(read_file(path, "config", std::uint64_t{1} << 20), path, overrides);
}

}  // namespace ropekit

namespace ropekit {

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

}  // namespace ropekit
