#include "ropekit/encodings/frequencies.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <numeric>

#include <fmt/format.h>

#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/rng.hpp"

// Every a * b + c below is two roundings, as in torch (one kernel per tensor op) and ggml's scalar code: without
// this, -march=native lets GCC fuse them into FMAs (one rounding) and the float32 emulation drifts by an ulp.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace ropekit {

namespace {

constexpr std::string_view kWhere = "ropekit::frequencies";

std::string key_name(const Scaling& s, std::string_view key) { return fmt::format("{}.{}", scheme_name(s), key); }

void check_factor(const Where& w, const std::string& name, double v) {
  if (!(v >= 1) || !std::isfinite(v)) throw_bad_value(w, name, format_number(v), "finite and >= 1");
}
void check_orig(const Where& w, const std::string& name, double v) {
  if (!(v > 1) || !std::isfinite(v)) throw_bad_value(w, name, format_number(v), "finite and > 1");
}
void check_optional_positive(const Where& w, const std::string& name, const std::optional<double>& v) {
  if (v) check_positive(w, name, *v);
}
void check_factor_list(const Where& w, const std::string& name, const std::vector<double>& v) {
  if (v.empty()) throw_bad_value(w, name, "[]", "a non-empty list");
  for (std::size_t i = 0; i < v.size(); ++i) check_positive(w, fmt::format("{}[{}]", name, i), v[i]);
}

// ---- the schemes, in HF's (or ggml's) operation order, in T = double or float -------------------------------

// HF: inv_freq = 1.0 / (base ** (arange(0, dim, 2).float() / dim)).
template <class T>
std::vector<T> geometric_hf(double base, int r, int count) {
  std::vector<T> out(static_cast<std::size_t>(count));
  if constexpr (std::is_same_v<T, double>) {  // float64: the library's one grid formula
    for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = geometric_frequency(base, i, r);
    return out;
  }
  const T b = static_cast<T>(base), rr = static_cast<T>(r);
  for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = T(1) / std::pow(b, static_cast<T>(2 * i) / rr);
  return out;
}

// ggml_rope_cache_init at position 1: theta_0 = 1, theta_{i+1} = theta_i * powf(base, -2/r).
template <class T>
std::vector<T> geometric_ggml(double base, int r, int count) {
  std::vector<T> out(static_cast<std::size_t>(count));
  const T scale = std::pow(static_cast<T>(base), T(-2) / static_cast<T>(r));
  T theta = 1;
  for (auto& v : out) {
    v = theta;
    theta *= scale;
  }
  return out;
}

template <class T>
std::vector<T> linear(const std::vector<T>& inv, double factor) {
  std::vector<T> out(inv.size());
  for (std::size_t i = 0; i < inv.size(); ++i) out[i] = inv[i] / static_cast<T>(factor);
  return out;
}

template <class T>
std::vector<T> llama3(const std::vector<T>& inv, const scaling::Llama3& l) {
  const double low_wavelen = l.orig / l.low, high_wavelen = l.orig / l.high;  // Python floats
  const T two_pi = static_cast<T>(2 * std::numbers::pi);
  std::vector<T> out(inv.size());
  for (std::size_t i = 0; i < inv.size(); ++i) {
    const T wavelen = two_pi / inv[i];
    if (wavelen > static_cast<T>(low_wavelen)) {
      out[i] = inv[i] / static_cast<T>(l.factor);
    } else if (wavelen < static_cast<T>(high_wavelen)) {
      out[i] = inv[i];
    } else {
      const T smooth = (static_cast<T>(l.orig) / wavelen - static_cast<T>(l.low)) / static_cast<T>(l.high - l.low);
      out[i] = (T(1) - smooth) * inv[i] / static_cast<T>(l.factor) + smooth * inv[i];
    }
  }
  return out;
}

// HF LongRoPE on a geometric schedule: 1 / (ext_factor * base ** (arange(0, dim, 2).float() / dim)).
template <class T>
std::vector<T> longrope_geometric(double base, int r, const std::vector<double>& lambda) {
  std::vector<T> out(lambda.size());
  const T b = static_cast<T>(base), rr = static_cast<T>(r);
  for (std::size_t i = 0; i < lambda.size(); ++i) {
    if constexpr (std::is_same_v<T, double>)  // float64: theta_i / lambda_i on the one grid formula
      out[i] = geometric_frequency(base, static_cast<int>(i), r) / lambda[i];
    else
      out[i] = T(1) / (static_cast<T>(lambda[i]) * std::pow(b, static_cast<T>(2 * i) / rr));
  }
  return out;
}

template <class T>
std::vector<T> longrope_explicit(const std::vector<T>& theta, const std::vector<double>& lambda) {
  std::vector<T> out(theta.size());
  for (std::size_t i = 0; i < theta.size(); ++i) out[i] = theta[i] / static_cast<T>(lambda[i]);
  return out;
}

// HF _compute_yarn_parameters: range and ramp bounds in Python floats, tensors in T.
template <class T>
std::vector<T> yarn_hf(double base, int r, int count, const scaling::Yarn& y) {
  const CorrectionRange range = yarn_correction_range(y, r, base);
  double low = range.low, high = range.high;
  if (low == high) high += 0.001;  // HF: prevent singularity
  const T b = static_cast<T>(base), rr = static_cast<T>(r), s = static_cast<T>(y.factor);
  const T tlow = static_cast<T>(low), width = static_cast<T>(high - low);
  std::vector<T> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    T extrapolation, interpolation;
    if constexpr (std::is_same_v<T, double>) {  // float64: theta_i and theta_i / s on the one grid formula
      extrapolation = geometric_frequency(base, i, r);
      interpolation = extrapolation / s;
    } else {
      const T pos = std::pow(b, static_cast<T>(2 * i) / rr);
      extrapolation = T(1) / pos;
      interpolation = T(1) / (s * pos);
    }
    const T ramp = std::clamp((static_cast<T>(i) - tlow) / width, T(0), T(1));
    const T e = T(1) - ramp;  // extrapolation weight
    out[static_cast<std::size_t>(i)] = interpolation * (T(1) - e) + extrapolation * e;
  }
  return out;
}

// llama.cpp ggml_rope_yarn_corr_dims + rope_yarn on the given extrapolated frequencies.
template <class T>
std::vector<T> yarn_ggml(const std::vector<T>& theta_extrap, double base, int r, const scaling::Yarn& y) {
  T low, high;
  if constexpr (std::is_same_v<T, float>) {
    const auto corr_dim = [&](float n_rot) {
      return static_cast<float>(r) * std::log(static_cast<float>(y.orig) / (n_rot * 2 * std::numbers::pi_v<float>)) /
             (2 * std::log(static_cast<float>(base)));
    };
    low = std::max(0.0f, std::floor(corr_dim(static_cast<float>(y.beta_fast))));
    high = std::min(static_cast<float>(r - 1), std::ceil(corr_dim(static_cast<float>(y.beta_slow))));
  } else {
    const CorrectionRange range = yarn_correction_range(y, r, base);  // truncate is true (validated)
    low = range.low;
    high = range.high;
  }
  const T freq_scale = T(1) / static_cast<T>(y.factor);
  std::vector<T> out(theta_extrap.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const T t = (static_cast<T>(i) - low) / std::max(static_cast<T>(0.001), high - low);
    const T ramp_mix = T(1) - std::min(T(1), std::max(T(0), t));  // extrapolation weight
    const T theta_interp = freq_scale * theta_extrap[i];
    out[i] = theta_interp * (1 - ramp_mix) + theta_extrap[i] * ramp_mix;
  }
  return out;
}

Eigen::MatrixXd column(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}
template <class T>
std::vector<double> widen(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

template <class T>
FrequencyTable geometric_table(const Geometric& g, const Scaling& scheme, std::optional<double> seq_len,
                               Convention convention) {
  const Where where{std::string(kWhere)};
  const int r = rotary_dims(g);
  check_positive(where, "base", g.base);
  if (!std::holds_alternative<scaling::None>(scheme) && !(g.base > 1))
    throw_bad_value(where, "base", format_number(g.base), fmt::format("> 1 with scaling {}", scheme_name(scheme)));
  if (g.count) check_in_range(where, "count", *g.count, 1, kMaxFrequencies);
  const int count = g.count.value_or(r / 2);
  // In float32, ggml's YaRN frequencies are its running product; in float64 both conventions use exact powers.
  const bool ggml_chain = std::is_same_v<T, float> && convention == Convention::ggml &&
                          std::holds_alternative<scaling::Yarn>(scheme);
  const std::vector<T> inv = ggml_chain ? geometric_ggml<T>(g.base, r, count) : geometric_hf<T>(g.base, r, count);
  const auto needs_r4 = [&] {
    if (r < 4)
      throw_bad_value(where, "dim", std::to_string(g.dim),
                      fmt::format("such that the rotary dims are >= 4 for scaling {} (exponent r/(r-2))", scheme_name(scheme)));
  };
  FrequencyTable t;
  t.unscaled = column(widen(inv));
  const std::vector<T> scaled = std::visit(
      Overloaded{
          [&](const scaling::None&) { return inv; },
          [&](const scaling::Linear& l) { return linear(inv, l.factor); },
          [&](const scaling::Ntk& n) {
            needs_r4();
            return geometric_hf<T>(ntk_base(g.base, r, n.factor), r, count);
          },
          [&](const scaling::Dynamic& d) {
            needs_r4();
            if (!seq_len)
              throw InputError(fmt::format("{}: scaling dynamic needs the current sequence length (--seq-len)", kWhere));
            if (*seq_len <= d.orig) return inv;
            return geometric_hf<T>(ntk_base(g.base, r, d.factor * *seq_len / d.orig - (d.factor - 1)), r, count);
          },
          [&](const scaling::Yarn& y) {
            t.attention_factor = yarn_attention_factor(y, convention);
            if (convention == Convention::ggml) {
              if constexpr (std::is_same_v<T, float>) {
                const float f = 1.0f / static_cast<float>(y.factor);
                const float a0 = static_cast<float>(y.attention_factor.value_or(1.0));
                t.attention_factor = a0 * (1.0f + 0.1f * std::log(1.0f / f));
              }
              return yarn_ggml(inv, g.base, r, y);
            }
            return yarn_hf<T>(g.base, r, count, y);
          },
          [&](const scaling::LongRope& l) {
            const bool is_long = seq_len && *seq_len > l.orig;
            const auto& lambda = is_long ? l.long_factor : l.short_factor;
            for (const auto* list : {&l.short_factor, &l.long_factor})
              if (static_cast<int>(list->size()) != count)
                throw_bad_value(where, list == &l.short_factor ? "longrope.short" : "longrope.long",
                                fmt::format("a list of {} values", list->size()),
                                fmt::format("one value per frequency: {} (count, default r/2)", count));
            t.attention_factor = longrope_attention_factor(l);
            return longrope_geometric<T>(g.base, r, lambda);
          },
          [&](const scaling::Llama3& l) { return llama3(inv, l); },
      },
      scheme);
  t.theta = column(widen(scaled));
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
  FrequencyTable t;
  t.unscaled = column(widen(inv));
  const auto refuse = [&](const std::string& name) -> std::vector<T> {
    throw_bad_value(where, "scaling", name,
                    fmt::format("none, linear, llama3 or longrope for explicit frequencies ({} is defined through a base)", name));
  };
  const std::vector<T> scaled = std::visit(
      Overloaded{
          [&](const scaling::None&) { return inv; },
          [&](const scaling::Linear& l) { return linear(inv, l.factor); },
          [&](const scaling::Ntk&) { return refuse("ntk"); },
          [&](const scaling::Dynamic&) { return refuse("dynamic"); },
          [&](const scaling::Yarn&) { return refuse("yarn"); },
          [&](const scaling::LongRope& l) {
            for (const auto* list : {&l.short_factor, &l.long_factor})
              if (list->size() != inv.size())
                throw_bad_value(where, list == &l.short_factor ? "longrope.short" : "longrope.long",
                                fmt::format("a list of {} values", list->size()),
                                fmt::format("one value per frequency: {}", inv.size()));
            t.attention_factor = longrope_attention_factor(l);
            return longrope_explicit(inv, seq_len && *seq_len > l.orig ? l.long_factor : l.short_factor);
          },
          [&](const scaling::Llama3& l) { return llama3(inv, l); },
      },
      scheme);
  t.theta = column(widen(scaled));
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

// ---- text -------------------------------------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> to_number(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string list_spelling(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + format_number(v[i]);
  return out + "]";
}

}  // namespace

// ---- public ---------------------------------------------------------------------------------------------------

int rotary_dims(const Geometric& g) {
  const Where where{std::string(kWhere)};
  if (g.dim < 2 || g.dim % 2) throw_bad_value(where, "dim", std::to_string(g.dim), "an even integer >= 2");
  if (!(g.partial > 0 && g.partial <= 1)) throw_bad_value(where, "partial", format_number(g.partial), "in (0, 1]");
  const double r = g.dim * g.partial, rounded = std::round(r);
  if (std::abs(r - rounded) > 1e-9 * r || rounded < 2 || std::fmod(rounded, 2) != 0)
    throw_bad_value(where, "partial", format_number(g.partial),
                    fmt::format("such that dim * partial = {} is an even integer >= 2", format_number(r)));
  if (rounded / 2 > kMaxFrequencies)
    throw_bad_value(where, "dim", std::to_string(g.dim), fmt::format("at most {} rotary dims", 2.0 * kMaxFrequencies));
  return static_cast<int>(rounded);
}

CorrectionRange yarn_correction_range(const scaling::Yarn& y, int rotary_dims, double base) {
  const auto dim = [&](double rotations) {
    return (rotary_dims * std::log(y.orig / (rotations * 2 * std::numbers::pi))) / (2 * std::log(base));
  };
  double low = dim(y.beta_fast), high = dim(y.beta_slow);
  if (y.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  return {std::max(low, 0.0), std::min(high, static_cast<double>(rotary_dims - 1))};
}

double yarn_mscale(double factor, double m) { return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0; }

double yarn_attention_factor(const scaling::Yarn& y, Convention convention) {
  const Where where{std::string(kWhere)};
  validate(Scaling(y), where);
  if (convention == Convention::ggml) {
    if (!y.truncate)
      throw_bad_value(where, "yarn.truncate", "false", "true with convention ggml (llama.cpp always truncates)");
    for (const auto& [name, v] : {std::pair{"yarn.mscale", y.mscale}, std::pair{"yarn.mscale_all_dim", y.mscale_all_dim}})
      if (v)
        throw_bad_value(where, name, format_number(*v),
                        "absent with convention ggml (llama.cpp applies it in model graphs, not in rope; "
                        "give attention_factor instead)");
    return y.attention_factor.value_or(1.0) * (1.0 + 0.1 * std::log(y.factor));
  }
  if (y.attention_factor) return *y.attention_factor;
  if (y.mscale && y.mscale_all_dim && *y.mscale != 0 && *y.mscale_all_dim != 0)
    return yarn_mscale(y.factor, *y.mscale) / yarn_mscale(y.factor, *y.mscale_all_dim);
  return yarn_mscale(y.factor);
}

double longrope_attention_factor(const scaling::LongRope& l) {
  if (l.attention_factor) return *l.attention_factor;
  const double s = l.max ? *l.max / l.orig : 1.0;
  return s <= 1 ? 1.0 : std::sqrt(1 + std::log(s) / std::log(l.orig));
}

double ntk_base(double base, int rotary_dims, double factor) {
  return base * std::pow(factor, static_cast<double>(rotary_dims) / (rotary_dims - 2));
}

void validate(const Scaling& s, const Where& w) {
  const auto name = [&](std::string_view key) { return key_name(s, key); };
  std::visit(Overloaded{
                 [&](const scaling::None&) {},
                 [&](const scaling::Linear& l) { check_factor(w, name("factor"), l.factor); },
                 [&](const scaling::Ntk& n) { check_factor(w, name("factor"), n.factor); },
                 [&](const scaling::Dynamic& d) {
                   check_factor(w, name("factor"), d.factor);
                   check_orig(w, name("orig"), d.orig);
                 },
                 [&](const scaling::Yarn& y) {
                   check_factor(w, name("factor"), y.factor);
                   check_orig(w, name("orig"), y.orig);
                   check_positive(w, name("beta_slow"), y.beta_slow);
                   check_finite(w, name("beta_fast"), y.beta_fast);
                   if (!(y.beta_fast > y.beta_slow))
                     throw_bad_value(w, name("beta_fast"), format_number(y.beta_fast),
                                     fmt::format("> beta_slow = {}", format_number(y.beta_slow)));
                   check_optional_positive(w, name("mscale"), y.mscale);
                   check_optional_positive(w, name("mscale_all_dim"), y.mscale_all_dim);
                   check_optional_positive(w, name("attention_factor"), y.attention_factor);
                 },
                 [&](const scaling::LongRope& l) {
                   check_factor_list(w, name("short"), l.short_factor);
                   check_factor_list(w, name("long"), l.long_factor);
                   check_orig(w, name("orig"), l.orig);
                   check_optional_positive(w, name("max"), l.max);
                   check_optional_positive(w, name("attention_factor"), l.attention_factor);
                 },
                 [&](const scaling::Llama3& l) {
                   check_factor(w, name("factor"), l.factor);
                   check_positive(w, name("low"), l.low);
                   check_finite(w, name("high"), l.high);
                   if (!(l.high > l.low))
                     throw_bad_value(w, name("high"), format_number(l.high), fmt::format("> low = {}", format_number(l.low)));
                   check_orig(w, name("orig"), l.orig);
                 },
             },
             s);
}

FrequencyTable frequencies(const FrequencySchedule& schedule, std::optional<double> seq_len, Convention convention,
                           bool float32) {
  const Where where{std::string(kWhere)};
  if (seq_len) check_positive(where, "seq_len", *seq_len);
  validate(schedule.scaling, where);
  if (convention == Convention::ggml && std::holds_alternative<scaling::Yarn>(schedule.scaling))
    (void)yarn_attention_factor(std::get<scaling::Yarn>(schedule.scaling), convention);  // ggml's refusals first
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
  return std::visit(Overloaded{
                        [](const scaling::None&) { return "none"; },
                        [](const scaling::Linear&) { return "linear"; },
                        [](const scaling::Ntk&) { return "ntk"; },
                        [](const scaling::Dynamic&) { return "dynamic"; },
                        [](const scaling::Yarn&) { return "yarn"; },
                        [](const scaling::LongRope&) { return "longrope"; },
                        [](const scaling::Llama3&) { return "llama3"; },
                    },
                    s);
}

std::string spelling(const Scaling& s) {
  std::vector<std::string> keys;
  const auto add = [&](std::string_view key, double v) { keys.push_back(fmt::format("{}={}", key, format_number(v))); };
  const auto add_opt = [&](std::string_view key, const std::optional<double>& v) {
    if (v) add(key, *v);
  };
  std::visit(Overloaded{
                 [&](const scaling::None&) {},
                 [&](const scaling::Linear& l) { add("factor", l.factor); },
                 [&](const scaling::Ntk& n) { add("factor", n.factor); },
                 [&](const scaling::Dynamic& d) {
                   add("factor", d.factor);
                   add("orig", d.orig);
                 },
                 [&](const scaling::Yarn& y) {
                   const scaling::Yarn def;
                   add("factor", y.factor);
                   add("orig", y.orig);
                   if (y.beta_fast != def.beta_fast) add("beta_fast", y.beta_fast);
                   if (y.beta_slow != def.beta_slow) add("beta_slow", y.beta_slow);
                   if (!y.truncate) keys.emplace_back("truncate=false");
                   add_opt("mscale", y.mscale);
                   add_opt("mscale_all_dim", y.mscale_all_dim);
                   add_opt("attention_factor", y.attention_factor);
                 },
                 [&](const scaling::LongRope& l) {
                   keys.push_back("short=" + list_spelling(l.short_factor));
                   keys.push_back("long=" + list_spelling(l.long_factor));
                   add("orig", l.orig);
                   add_opt("max", l.max);
                   add_opt("attention_factor", l.attention_factor);
                 },
                 [&](const scaling::Llama3& l) {
                   const scaling::Llama3 def;
                   add("factor", l.factor);
                   add("orig", l.orig);
                   if (l.low != def.low) add("low", l.low);
                   if (l.high != def.high) add("high", l.high);
                 },
             },
             s);
  if (std::holds_alternative<scaling::None>(s)) return "none";
  return fmt::format("{}({})", scheme_name(s), fmt::join(keys, ","));
}

std::vector<double> parse_bracketed_numbers(std::string_view text, const Where& where, std::string_view name) {
  const std::string_view t = trim(text);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']')
    throw_bad_value(where, name, std::string(text), "a list of numbers in square brackets, e.g. [1,1.05,1.1]");
  std::string_view inner = trim(t.substr(1, t.size() - 2));
  if (inner.empty()) throw_bad_value(where, name, std::string(text), "a non-empty list of numbers");
  std::vector<double> out;
  while (true) {
    const std::size_t comma = inner.find(',');
    const std::string_view item = inner.substr(0, comma);
    const auto v = to_number(item);
    if (!v)
      throw_bad_value(where, fmt::format("{}[{}]", name, out.size()), std::string(trim(item)), "a number");
    out.push_back(*v);
    if (comma == std::string_view::npos) break;
    inner.remove_prefix(comma + 1);
  }
  return out;
}

Scaling parse_scaling(std::string_view name, const std::map<std::string, std::string>& keys, const Where& where) {
  struct Scheme {
    std::string_view name;
    std::vector<std::string_view> keys, required;
  };
  static const std::vector<Scheme> schemes = {
      {"none", {}, {}},
      {"linear", {"factor"}, {"factor"}},
      {"ntk", {"factor"}, {"factor"}},
      {"dynamic", {"factor", "orig"}, {"factor"}},
      {"yarn",
       {"factor", "orig", "beta_fast", "beta_slow", "truncate", "mscale", "mscale_all_dim", "attention_factor"},
       {"factor"}},
      {"longrope", {"short", "long", "orig", "max", "attention_factor"}, {"short", "long"}},
      {"llama3", {"factor", "low", "high", "orig"}, {}},
  };
  const auto it = std::find_if(schemes.begin(), schemes.end(), [&](const Scheme& s) { return s.name == name; });
  if (it == schemes.end())
    throw_bad_value(where, "scaling", std::string(name), "one of none, linear, ntk, dynamic, yarn, longrope, llama3");
  const std::string scheme(name);
  const auto qualified = [&](std::string_view key) { return fmt::format("{}.{}", scheme, key); };
  for (const auto& [key, value] : keys)
    if (std::find(it->keys.begin(), it->keys.end(), key) == it->keys.end())
      throw_bad_value(where, qualified(key), value,
                      it->keys.empty() ? fmt::format("absent: {} takes no keys", scheme)
                                       : fmt::format("a key of {}: {}", scheme, fmt::join(it->keys, ", ")));
  for (const auto key : it->required)
    if (!keys.count(std::string(key)))
      throw_bad_value(where, qualified(key), "(missing)", fmt::format("given: {} needs {}", scheme, fmt::join(it->required, " and ")));

  const auto number = [&](std::string_view key, double& out) {
    const auto k = keys.find(std::string(key));
    if (k == keys.end()) return;
    const auto v = to_number(k->second);
    if (!v) throw_bad_value(where, qualified(key), k->second, "a number");
    out = *v;
  };
  const auto optional = [&](std::string_view key, std::optional<double>& out) {
    if (!keys.count(std::string(key))) return;
    double v = 0;
    number(key, v);
    out = v;
  };
  const auto list = [&](std::string_view key, std::vector<double>& out) {
    const auto k = keys.find(std::string(key));
    if (k != keys.end()) out = parse_bracketed_numbers(k->second, where, qualified(key));
  };

  Scaling result;
  if (scheme == "linear") {
    scaling::Linear l;
    number("factor", l.factor);
    result = l;
  } else if (scheme == "ntk") {
    scaling::Ntk n;
    number("factor", n.factor);
    result = n;
  } else if (scheme == "dynamic") {
    scaling::Dynamic d;
    number("factor", d.factor);
    number("orig", d.orig);
    result = d;
  } else if (scheme == "yarn") {
    scaling::Yarn y;
    number("factor", y.factor);
    number("orig", y.orig);
    number("beta_fast", y.beta_fast);
    number("beta_slow", y.beta_slow);
    if (const auto k = keys.find("truncate"); k != keys.end()) {
      const std::string_view v = trim(k->second);
      if (v != "true" && v != "false") throw_bad_value(where, qualified("truncate"), k->second, "true or false");
      y.truncate = v == "true";
    }
    optional("mscale", y.mscale);
    optional("mscale_all_dim", y.mscale_all_dim);
    optional("attention_factor", y.attention_factor);
    result = y;
  } else if (scheme == "longrope") {
    scaling::LongRope l;
    list("short", l.short_factor);
    list("long", l.long_factor);
    number("orig", l.orig);
    optional("max", l.max);
    optional("attention_factor", l.attention_factor);
    result = l;
  } else if (scheme == "llama3") {
    scaling::Llama3 l;
    number("factor", l.factor);
    number("low", l.low);
    number("high", l.high);
    number("orig", l.orig);
    result = l;
  }
  validate(result, where);
  return result;
}

}  // namespace ropekit
