#include "ropekit/encodings/scaling/yarn.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <tuple>

#include "ropekit/core/no_fp_contract.hpp"  // two roundings per a * b + c, as torch and ggml

namespace ropekit {

namespace scaling {

namespace {

// HF _compute_yarn_parameters: range and ramp bounds in Python floats, tensors in T.
template <class T>
std::vector<T> yarn_hf(double base, int r, int count, const Yarn& y) {
  const CorrectionRange range = yarn_correction_range(y, r, base);
  double low = range.low, high = range.high;
  if (low == high) high += 0.001;  // HF: prevent singularity
  const T b = static_cast<T>(base), rr = static_cast<T>(r), s = static_cast<T>(yarn_factor(y));
  const T tlow = static_cast<T>(low), width = static_cast<T>(high - low);
  std::vector<T> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    T extrapolation, interpolation;
    if constexpr (std::is_same_v<T, double>) {  // float64: theta_i and theta_i / s on the one grid formula
      extrapolation = geometric_frequency(base, i, r);
      interpolation = extrapolation / s;
    } else {
      const T pos = torch_powf(b, static_cast<T>(2 * i) / rr);
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
std::vector<T> yarn_ggml(const std::vector<T>& theta_extrap, double base, int r, const Yarn& y) {
  const std::vector<T> ramp_mix = ggml_yarn_ramp_mix<T>(y, base, r, static_cast<int>(theta_extrap.size()));
  const T freq_scale = T(1) / static_cast<T>(yarn_factor(y));
  std::vector<T> out(theta_extrap.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const T theta_interp = freq_scale * theta_extrap[i];
    out[i] = theta_interp * (1 - ramp_mix[i]) + theta_extrap[i] * ramp_mix[i];
  }
  return out;
}

}  // namespace

double attention_factor(const Yarn& y, Convention convention) { return yarn_attention_factor(y, convention); }

template <class T>
std::vector<T> ggml_yarn_ramp_mix(const Yarn& y, double base, int r, int count) {
  T low, high;
  if constexpr (std::is_same_v<T, float>) {
    const auto corr_dim = [&](float n_rot) {
      return static_cast<float>(r) * std::log(static_cast<float>(y.orig) / (n_rot * 2 * std::numbers::pi_v<float>)) /
             (2 * std::log(static_cast<float>(base)));
    };
    low = std::max(0.0f, std::floor(corr_dim(static_cast<float>(yarn_beta_fast(y)))));
    high = std::min(static_cast<float>(r - 1), std::ceil(corr_dim(static_cast<float>(yarn_beta_slow(y)))));
  } else {
    const CorrectionRange range = yarn_correction_range(y, r, base);  // truncate is true (validated)
    low = range.low;
    high = range.high;
  }
  std::vector<T> out(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const T t = (static_cast<T>(i) - low) / std::max(static_cast<T>(0.001), high - low);
    out[i] = T(1) - std::min(T(1), std::max(T(0), t));  // extrapolation weight (ext_factor 1)
  }
  return out;
}
template std::vector<float> ggml_yarn_ramp_mix<float>(const Yarn&, double, int, int);
template std::vector<double> ggml_yarn_ramp_mix<double>(const Yarn&, double, int, int);

template <class T>
Scaled<T> scale(const Yarn& y, const GeometricInput<T>& in) {
  if (in.r % 2)
    throw_bad_value(in.where, "partial", format_number(in.partial),
                    fmt::format("such that int(dim * partial) is even with scaling yarn (it is {}: transformers' ramp "
                                "has r // 2 values for (r + 1) / 2 frequencies, and torch refuses the product)",
                                in.r));
  Scaled<T> out;
  out.attention_factor = yarn_attention_factor(y, in.convention);
  if (in.convention == Convention::huggingface) {
    out.theta = yarn_hf<T>(in.base, in.r, in.count, y);
    return out;
  }
  if constexpr (std::is_same_v<T, float>) {
    // In float32, ggml's frequencies are its running product; in float64 both conventions use exact powers.
    out.unscaled = ggml_grid<T>(in.base, in.r, in.count);
    const float f = 1.0f / static_cast<float>(yarn_factor(y));
    const float a0 = static_cast<float>(y.attention_factor.value_or(1.0));
    out.attention_factor = a0 * (1.0f + 0.1f * std::log(1.0f / f));
    out.theta = yarn_ggml(*out.unscaled, in.base, in.r, y);
  } else {
    out.theta = yarn_ggml(in.unscaled, in.base, in.r, y);
  }
  return out;
}

template <class T>
Scaled<T> scale(const Yarn&, const ExplicitInput<T>& in) {
  refuse_explicit(in.where, Yarn::name);
}

std::vector<std::string> notes(const Yarn& y) {
  std::vector<std::string> out;
  if (y.factor && y.max && *y.max / y.orig != *y.factor)
    out.push_back(fmt::format("yarn.max = {} gives max / orig = {}, not factor = {}: factor is used, as transformers "
                              "does (it warns)",
                              format_number(*y.max), format_number(*y.max / y.orig), format_number(*y.factor)));
  for (const auto& [key, v, fallback] : {std::tuple{"beta_fast", y.beta_fast, 32}, std::tuple{"beta_slow", y.beta_slow, 1}})
    if (v == 0) out.push_back(fmt::format("yarn.{} = 0 means {}, as transformers reads it ({} or {})", key, fallback, key, fallback));
  const double fast = yarn_beta_fast(y), slow = yarn_beta_slow(y);
  if (!(fast > slow))
    out.push_back(fmt::format("yarn.beta_fast = {} is not above beta_slow = {}: accepted as transformers does (it "
                              "only warns); the ramp between the correction dims runs backwards",
                              format_number(fast), format_number(slow)));
  for (const auto& [key, v] : {std::pair{"mscale", y.mscale}, std::pair{"mscale_all_dim", y.mscale_all_dim}})
    if (v && *v == 0)
      out.push_back(fmt::format("yarn.{} = 0 is ignored, as transformers does (a zero mscale or mscale_all_dim "
                                "drops the mscale ratio)", key));
  return out;
}

template Scaled<double> scale(const Yarn&, const GeometricInput<double>&);
template Scaled<float> scale(const Yarn&, const GeometricInput<float>&);
template Scaled<double> scale(const Yarn&, const ExplicitInput<double>&);
template Scaled<float> scale(const Yarn&, const ExplicitInput<float>&);

}  // namespace scaling

CorrectionRange yarn_correction_range(const scaling::Yarn& y, int rotary_dims, double base) {
  const auto dim = [&](double rotations) {
    return (rotary_dims * std::log(y.orig / (rotations * 2 * std::numbers::pi))) / (2 * std::log(base));
  };
  double low = dim(scaling::yarn_beta_fast(y)), high = dim(scaling::yarn_beta_slow(y));
  if (y.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  return {std::max(low, 0.0), std::min(high, static_cast<double>(rotary_dims - 1))};
}

double yarn_mscale(double factor, double m) { return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0; }

double yarn_attention_factor(const scaling::Yarn& y, Convention convention) {
  const Where where{"ropekit::frequencies"};
  scaling::check_keys(y, where);
  if (convention == Convention::ggml) {
    if (!y.truncate)
      throw_bad_value(where, "yarn.truncate", "false", "true with convention ggml (llama.cpp always truncates)");
    for (const auto& [name, v] : {std::pair{"yarn.mscale", y.mscale}, std::pair{"yarn.mscale_all_dim", y.mscale_all_dim}})
      if (v && *v != 0)  // 0 is ignored, as under huggingface
        throw_bad_value(where, name, format_number(*v),
                        "absent with convention ggml (llama.cpp applies it in model graphs, not in rope; "
                        "give attention_factor instead)");
    return y.attention_factor.value_or(1.0) * (1.0 + 0.1 * std::log(scaling::yarn_factor(y)));
  }
  const double s = scaling::yarn_factor(y);
  if (y.attention_factor) return *y.attention_factor;
  if (y.mscale && y.mscale_all_dim && *y.mscale != 0 && *y.mscale_all_dim != 0)  // HF: `if mscale and mscale_all_dim`
    return yarn_mscale(s, *y.mscale) / yarn_mscale(s, *y.mscale_all_dim);
  return yarn_mscale(s);
}

}  // namespace ropekit
