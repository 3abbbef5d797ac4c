#include "ropekit/encodings/frequencies.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/rng.hpp"

#include "ropekit/core/no_fp_contract.hpp"  // two roundings per a * b + c, as torch and ggml

namespace ropekit {

namespace {

constexpr std::string_view kWhere = "ropekit::frequencies";

Eigen::MatrixXd column(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}
template <class T>
std::vector<double> widen(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}
template <class T>
void fill(FrequencyTable& t, const std::vector<T>& unscaled, const scaling::Scaled<T>& s) {
  t.unscaled = column(widen(s.unscaled ? *s.unscaled : unscaled));
  t.theta = column(widen(s.theta));
  t.attention_factor = s.attention_factor;
  if (s.identity_dims) t.identity_dims = *s.identity_dims;
}

// The visits below forward to the scheme's own overloads (scaling/<scheme>.hpp): each alternative must model
// ScalingScheme (checked in schemes.hpp), so a scheme without them does not compile; there is no default branch.

template <class T>
FrequencyTable geometric_table(const Geometric& g, const Scaling& scheme, std::optional<double> seq_len,
                               Convention convention) {
  const Where where{std::string(kWhere)};
  const int r = rotary_dims(g);
  check_positive(where, "base", g.base);
  if (!std::holds_alternative<scaling::None>(scheme) && !(g.base > 1))
    throw_bad_value(where, "base", format_number(g.base), fmt::format("> 1 with scaling {}", scheme_name(scheme)));
  if (g.count) check_in_range(where, "count", *g.count, 1, kMaxFrequencies);
  const int count = g.count.value_or(default_count(g));
  const std::vector<T> inv = scaling::geometric_grid<T>(g.base, r, count);
  const scaling::GeometricInput<T> in{g.base, g.dim, g.partial, r, count, inv, seq_len, convention, where};
  FrequencyTable t;
  t.identity_dims = unrotated_dims(g);
  fill(t, inv, std::visit([&]<scaling::ScalingScheme S>(const S& s) { return scaling::scale(s, in); }, scheme));
  return t;
}

template <class T>
FrequencyTable explicit_table(const ExplicitFrequencies& e, const Scaling& scheme, std::optional<double> seq_len) {
  const Where where{std::string(kWhere)};
  if (e.values.empty()) throw_bad_value(where, "values", "[]", "a non-empty list of frequencies");
  if (e.values.size() > static_cast<std::size_t>(kMaxFrequencies))
    throw_bad_value(where, "values", fmt::format("{} frequencies", e.values.size()),
                    fmt::format("at most {}", kMaxFrequencies));
  for (std::size_t i = 0; i < e.values.size(); ++i)
    check_positive(where, e.source.empty() ? fmt::format("values[{}]", i) : fmt::format("{}: value {}", e.source, i + 1),
                   e.values[i]);
  std::vector<T> inv(e.values.begin(), e.values.end());
  if (std::is_same_v<T, float>)
    for (std::size_t i = 0; i < inv.size(); ++i)
      if (!(inv[i] > 0) || !std::isfinite(inv[i]))
        throw_bad_value(where, fmt::format("values[{}]", i), format_number(e.values[i]), "> 0 and finite once rounded to float32");
  const scaling::ExplicitInput<T> in{inv, seq_len, where};
  FrequencyTable t;
  fill(t, inv, std::visit([&]<scaling::ScalingScheme S>(const S& s) { return scaling::scale(s, in); }, scheme));
  return t;
}

FrequencyTable sampled_table(const SampledFrequencies& s, const Scaling& scheme, bool float32) {
  const Where where{std::string(kWhere)};
  if (!std::holds_alternative<scaling::None>(scheme))
    throw_bad_value(where, "scaling", scheme_name(scheme), "none for sampled frequencies (rf-rope)");
  check_in_range(where, "count", s.count, 1, kMaxFrequencies);
  check_samplable(s.spectrum, kWhere);
  const int k = dims(s.spectrum);
  const std::size_t D = static_cast<std::size_t>(s.count), K = static_cast<std::size_t>(k);
  std::vector<double> w(D * K);  // structure of arrays: component j of frequency i at w[j * D + i]
  if (!s.seed) {
    if (k != 1)
      throw_bad_value(where, "seed", "(none)",
                      fmt::format("given for a k = {} spectrum (the deterministic quantile grid needs k = 1)", k));
    if (s.sampling == Sampling::antithetic)
      throw_bad_value(where, "sampling", "antithetic", "iid or stratified without a seed (antithetic draws need one)");
    const QuantileFunction Q = make_quantile(s.spectrum);
    for (std::size_t i = 0; i < D; ++i) w[i] = Q((static_cast<double>(i) + 0.5) / static_cast<double>(D));
  } else {
    if (s.sampling == Sampling::stratified && k != 1)
      throw_bad_value(where, "sampling", "stratified", fmt::format("iid or antithetic for k = {} (stratified needs k = 1)", k));
    Rng rng(*s.seed, kStreamScheduleFrequencies, 0);
    const QuantileFunction Q = s.sampling == Sampling::stratified ? make_quantile(s.spectrum) : QuantileFunction();
    std::vector<double> half;
    std::vector<std::size_t> perm;
    draw_frequencies(s.spectrum, s.sampling, Q, rng, D, w.data(), half, perm);
  }
  if (float32)
    for (double& v : w) v = static_cast<double>(static_cast<float>(v));
  FrequencyTable t;
  t.theta = Eigen::Map<const Eigen::MatrixXd>(w.data(), static_cast<Eigen::Index>(D), static_cast<Eigen::Index>(K));
  t.unscaled = t.theta;
  return t;
}

}  // namespace

// ---- public ---------------------------------------------------------------------------------------------------

int rotary_dims(const Geometric& g) {
  const Where where{std::string(kWhere)};
  if (g.dim < 2 || g.dim % 2) throw_bad_value(where, "dim", std::to_string(g.dim), "an even integer >= 2");
  if (!(g.partial > 0 && g.partial <= 1)) throw_bad_value(where, "partial", format_number(g.partial), "in (0, 1]");
  const int r = truncated_rotary_dims(g);
  if (r < 1)
    throw_bad_value(where, "partial", format_number(g.partial),
                    fmt::format("such that int(dim * partial) >= 1 (dim * partial = {})", format_number(g.dim * g.partial)));
  if (default_count(g) > kMaxFrequencies)
    throw_bad_value(where, "dim", std::to_string(g.dim), fmt::format("at most {} rotary dims", 2.0 * kMaxFrequencies));
  return r;
}

std::vector<std::string> schedule_notes(const FrequencySchedule& schedule) {
  std::vector<std::string> out =
      std::visit([]<scaling::ScalingScheme S>(const S& x) {
        std::vector<std::string> n = scaling::rule_notes(x);
        for (auto& line : scaling::notes(x)) n.push_back(std::move(line));
        return n;
      }, schedule.scaling);
  if (const auto* g = std::get_if<Geometric>(&schedule.source)) {
    const double product = g->dim * g->partial;
    const int r = truncated_rotary_dims(*g);
    if (std::holds_alternative<scaling::Proportional>(schedule.scaling)) {
      const int k = scaling::proportional_pairs(g->dim, g->partial);
      if (product / 2 != k)
        out.push_back(fmt::format("partial = {}: partial * dim / 2 = {} is not an integer; as transformers, "
                                  "floor gives {} rotating pairs, {} identity pairs",
                                  format_number(g->partial), format_number(product / 2), k, g->dim / 2 - k));
    } else if (product != r || r % 2)
      out.push_back(fmt::format("partial = {}: dim * partial = {} is not an even integer; as transformers, r = "
                                "int(dim * partial) = {} gives {} frequencies base^(-2i/{}) rotating {} dims, {} unrotated",
                                format_number(g->partial), format_number(product), r, default_count(*g), r,
                                2 * default_count(*g), unrotated_dims(*g)));
  }
  return out;
}

void validate(const Scaling& s, const Where& w) {
  std::visit([&]<scaling::ScalingScheme S>(const S& x) { scaling::check_keys(x, w); }, s);
}

FrequencyTable frequencies(const FrequencySchedule& schedule, std::optional<double> seq_len, Convention convention,
                           bool float32) {
  const Where where{std::string(kWhere)};
  if (seq_len) check_positive(where, "seq_len", *seq_len);
  validate(schedule.scaling, where);
  // A scheme's refusals under the convention (ggml YaRN) come before the source's checks.
  std::visit([&]<scaling::ScalingScheme S>(const S& x) { (void)scaling::attention_factor(x, convention); },
             schedule.scaling);
  return std::visit(Overloaded{
                        [&](const Geometric& g) {
                          return float32 ? geometric_table<float>(g, schedule.scaling, seq_len, convention)
                                         : geometric_table<double>(g, schedule.scaling, seq_len, convention);
                        },
                        [&](const ExplicitFrequencies& e) {
                          return float32 ? explicit_table<float>(e, schedule.scaling, seq_len)
                                         : explicit_table<double>(e, schedule.scaling, seq_len);
                        },
                        [&](const SampledFrequencies& s) { return sampled_table(s, schedule.scaling, float32); },
                    },
                    schedule.source);
}

std::string scheme_name(const Scaling& s) {
  return std::visit([]<scaling::ScalingScheme S>(const S&) { return std::string(S::name); }, s);
}

double* tunable_factor(Scaling& s) {
  return std::visit([]<scaling::ScalingScheme S>(S& x) { return scaling::factor_of(x); }, s);
}

std::optional<double> scheme_original_length(const Scaling& s) {
  return std::visit([]<scaling::ScalingScheme S>(const S& x) { return scaling::original_length(x); }, s);
}

bool scheme_needs_seq_len(const Scaling& s) {
  return std::visit([]<scaling::ScalingScheme S>(const S&) { return S::needs_seq_len; }, s);
}

std::optional<scaling::GgmlRope> scheme_ggml_rope(const Scaling& s, double base, int r, int count) {
  return std::visit([&]<scaling::ScalingScheme S>(const S& x) { return scaling::ggml_rope(x, base, r, count); }, s);
}

bool scheme_zero_identity_pairs(const Scaling& s) {
  return std::visit([]<scaling::ScalingScheme S>(const S&) { return S::zero_identity_pairs; }, s);
}

std::string spelling(const Scaling& s) {
  return std::visit(
      []<scaling::ScalingScheme S>(const S& x) {
        if (scaling::scheme_keys(x).empty()) return std::string(S::name);
        return fmt::format("{}({})", S::name, fmt::join(scaling::spelling_keys(x), ","));
      },
      s);
}

namespace {

// The scheme named `name` among the alternatives I.. of Scaling, read and checked; none if no alternative has it.
template <std::size_t I = 0>
std::optional<Scaling> parse_alternative(std::string_view name, const std::map<std::string, std::string>& keys,
                                         const Where& where) {
  if constexpr (I == std::variant_size_v<Scaling>) {
    return std::nullopt;
  } else {
    using S = std::variant_alternative_t<I, Scaling>;
    if (name != S::name) return parse_alternative<I + 1>(name, keys, where);
    const S s = scaling::parse_keys<S>(keys, where);
    scaling::check_keys(s, where);
    return Scaling(s);
  }
}

std::string_view rule_text(scaling::Rule rule, bool list) {
  if (list) return "a list [a,b,...], each > 0";
  switch (rule) {
    case scaling::Rule::any: return "true or false";
    case scaling::Rule::factor: return "> 0 (below 1: a note)";
    case scaling::Rule::orig: return "> 1";
    case scaling::Rule::positive: return "> 0";
    case scaling::Rule::nonnegative: return ">= 0";
    case scaling::Rule::finite: return "finite";
  }
  return "";
}

// The rows of scheme S's key table, its defaults read from a default S.
template <scaling::ScalingScheme S>
void add_key_infos(std::vector<SchemeKeyInfo>& out) {
  for (const auto& k : scaling::scheme_keys(S{})) {
    std::string def = k.required           ? "required"
                      : !k.unless.empty() ? fmt::format("required unless {}", k.unless)
                                          : k.print(S{}).value_or("unset");
    out.push_back({std::string(S::name), std::string(k.name), std::move(def), std::string(rule_text(k.rule, k.list)),
                   std::string(k.meaning), std::string(k.hf_key)});
  }
}

template <std::size_t... I>
std::vector<SchemeKeyInfo> key_infos(std::index_sequence<I...>) {
  std::vector<SchemeKeyInfo> out;
  (add_key_infos<std::variant_alternative_t<I, Scaling>>(out), ...);
  return out;
}

template <std::size_t... I>
std::string scheme_names(std::index_sequence<I...>) {
  const std::vector<std::string_view> names = {std::variant_alternative_t<I, Scaling>::name...};
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

Scaling parse_scaling(std::string_view name, const std::map<std::string, std::string>& keys, const Where& where) {
  // "default" is transformers' rope_type for no scaling (and the word the `default()` error suggests): none.
  if (name == "default") name = "none";
  if (auto s = parse_alternative(name, keys, where)) return *s;
  throw_bad_value(where, "scaling", std::string(name),
                  "one of " + scheme_names(std::make_index_sequence<std::variant_size_v<Scaling>>()));
}

const std::vector<SchemeKeyInfo>& scheme_key_infos() {
  static const std::vector<SchemeKeyInfo> rows = key_infos(std::make_index_sequence<std::variant_size_v<Scaling>>());
  return rows;
}

}  // namespace ropekit
