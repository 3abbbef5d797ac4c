#include "config/fit_config_yaml.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

namespace {

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
      throw InputError(fmt::format("{}: {}.{} = none (must be set: {})", where_, section_name, key, constraint));
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

// A run config is a few levels deep with a few hundred nodes. An alias can make yaml-cpp's node graph cyclic
// (`a: &b {x: *b}`: walking it overflowed the stack) or exponentially large when expanded (nested aliases of
// aliases), so the walk stops past these bounds with the usual one-line error (issue 20).
constexpr int kMaxYamlDepth = 64;
constexpr std::size_t kMaxYamlNodes = 1u << 20;

// yaml-cpp keeps every entry of a mapping and answers lookups with the first; PyYAML (the reference's
// reader) keeps the last. A key given twice is ambiguous: refuse it, naming both lines.
void check_unique_keys(const YAML::Node& node, const std::string& where, const std::string& path, int depth,
                       std::size_t& visited) {
  if (depth > kMaxYamlDepth || ++visited > kMaxYamlNodes)
    throw_bad_value(where, path.empty() ? std::string("(document)") : path,
                    depth > kMaxYamlDepth ? fmt::format("nested deeper than {} levels", kMaxYamlDepth)
                                          : fmt::format("more than {} nodes once its aliases are expanded", kMaxYamlNodes),
                    "a run config without self-referring or exponentially nested aliases (&anchor / *alias)");
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
      check_unique_keys(it->second, where, full, depth + 1, visited);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      check_unique_keys(node[i], where, fmt::format("{}[{}]", path, i), depth + 1, visited);
  }
}

}  // namespace

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
  if (!root.IsMap())
    throw InputError(where + ": not a YAML mapping (must have seeds, methods or encodings, and a toy or benchmarks section)");
  std::size_t visited = 0;
  check_unique_keys(root, where, "", 0, visited);

  FitConfig c;
  c.source = std::string(source);
  const bool has_toy = root["toy"].IsDefined() && !root["toy"].IsNull();
  const bool has_bench = root["benchmarks"].IsDefined() && !root["benchmarks"].IsNull();
  if (overrides.section) {
    if (*overrides.section != "toy" && *overrides.section != "benchmarks")
      throw_bad_value("ropekit fit", "--section", "'" + *overrides.section + "'", "toy or benchmarks");
    if (!root[*overrides.section].IsDefined())
      throw InputError(fmt::format("{}: --section = '{}' (must be a section of the config: it has none of that name)",
                                   where, *overrides.section));
    c.section = *overrides.section;
  } else if (has_toy && has_bench) {
    throw InputError(where + ": has both 'toy' and 'benchmarks' sections (choose one with --section)");
  } else if (has_toy || has_bench) {
    c.section = has_toy ? "toy" : "benchmarks";
  } else {
    throw InputError(where + ": neither a 'toy' nor a 'benchmarks' section (must have one)");
  }
  const YAML::Node sec = root[c.section];
  if (!sec.IsMap()) throw InputError(fmt::format("{}: {} = {} (must be a mapping)", where, c.section,
                                                 sec.IsSequence() ? "a list" : sec.IsScalar() ? "a scalar" : "null"));
  const YAML::Node pos = root["position"];
  if (pos.IsDefined() && !pos.IsNull() && !pos.IsMap()) throw InputError(where + ": position = " + (pos.IsSequence() ? "a list" : "a scalar") + " (must be a mapping)");
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
  // encodings: spellings of encoding.hpp, fitted beside the methods (either list may be absent or empty, not both).
  if (overrides.encodings) {
    c.encodings = *overrides.encodings;
    c.encodings_key = "--encoding";
  } else if (auto n = opt(root, "encodings"); n) {
    c.encodings = rd.names(*n, "encodings");
  }
  if (overrides.targets) c.targets = *overrides.targets;
  else c.targets = (s == "toy") ? toy_targets() : structured_targets();

  // Basis and target parameters.
  c.basis.train_context = rd.bounded_int(rd.require(sec, s, "train_context", "an integer >= 1"), s + ".train_context", 1, "an integer >= 1");
  if (c.basis.train_context > FitConfig::kMaxLength)
    throw_bad_value(where, s + ".train_context", std::to_string(c.basis.train_context), fmt::format("<= {}", FitConfig::kMaxLength));
  c.basis.num_freqs = rd.bounded_int(rd.require(sec, s, "num_freqs", "an integer >= 1"), s + ".num_freqs", 1, "an integer >= 1");
  {
    const auto h = rd.integer(rd.require(sec, s, "head_dim", "a positive even integer"), s + ".head_dim", "a positive even integer");
    if (h <= 0 || h % 2 != 0 || h > 1'000'000) throw_bad_value(where, s + ".head_dim", std::to_string(h), "a positive even integer");
    c.basis.head_dim = static_cast<int>(h);
  }
  if (auto n = opt(pos, "theta"); n) c.basis.base = rd.real(*n, "position.theta", "finite and > 0");
  if (auto n = opt(pos, "bounded_tau"); n) c.basis.bounded_tau = rd.boolean(*n, "position.bounded_tau");
  std::string gamma_key = s + ".gamma";  // falls back to position.gamma_min, then 1e-4
  if (auto n = opt(sec, "gamma"); n) c.basis.gamma = rd.real(*n, gamma_key, "finite and >= 0");
  else if (auto g = opt(pos, "gamma_min"); g)
    gamma_key = "position.gamma_min", c.basis.gamma = rd.real(*g, gamma_key, "finite and >= 0");
  check_positive(where, "position.theta", c.basis.base);
  check_nonnegative(where, gamma_key, c.basis.gamma);

  c.target.base = c.basis.base;
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
