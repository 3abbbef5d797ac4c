#pragma once
// LongRoPE / Phi-3 "su" (Ding et al. 2024, arXiv 2402.13753): theta'_i = theta_i / lambda_i, lambda = long_factor
// when the current length T > orig, else short_factor (so without a T the short factors are used, as HF at init).
// Both lists have one value per frequency (r/2 for a default geometric schedule; HF requires dim/2).
// Attention factor: attention_factor if given, else sqrt(1 + ln s / ln orig) (1 if s <= 1), s = factor if given
// (HF prefers it over max / orig), else max / orig, else 1. The factor changes only the attention factor.

#include <fmt/format.h>

#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit {

namespace scaling {

struct LongRope {
  std::vector<double> short_factor{}, long_factor{};  ///< each value finite, > 0
  double orig = 0;                                ///< L0, finite, > 1; required (0: not given, refused)
  std::optional<double> max{};                    ///< max position, finite, > 0; factor s = max / orig
  std::optional<double> attention_factor{};       ///< finite, > 0
  std::optional<double> factor{};                 ///< s, finite, > 0 (below 1: a note); given, max is not used
  static constexpr std::string_view name = "longrope";
  static constexpr bool needs_seq_len = false;  // T chooses the list, but the short list applies without one
  static constexpr bool zero_identity_pairs = false;
};

inline std::span<const Key<LongRope>> scheme_keys(const LongRope&) {
  static const Key<LongRope> keys[] = {
      key<&LongRope::short_factor>("short", Rule::positive, true)
          .about("the divisors lambda_i, one per frequency, up to orig (and without a length T)", "short_factor"),
      key<&LongRope::long_factor>("long", Rule::positive, true)
          .about("the divisors lambda_i, one per frequency, at lengths T past orig", "long_factor"),
      key<&LongRope::factor>("factor", Rule::factor)
          .about("s of the attention factor (unset: max / orig, else 1)", "factor"),
      key<&LongRope::orig>("orig", Rule::orig, true)
          .about(kOrigMeaning, "original_max_position_embeddings"),
      key<&LongRope::max>("max", Rule::positive)
          .about(kMaxMeaning, "config.max_position_embeddings"),
      key<&LongRope::attention_factor>("attention_factor", Rule::positive)
          .about("the factor a on cos and sin (unset: sqrt(1 + ln s / ln orig), 1 for s <= 1)", "attention_factor"),
  };
  return keys;
}

}  // namespace scaling

/// The attention factor of a LongRoPE scheme (see scaling::LongRope).
inline double longrope_attention_factor(const scaling::LongRope& l) {
  if (l.attention_factor) return *l.attention_factor;
  const double s = l.factor ? *l.factor : l.max ? *l.max / l.orig : 1.0;
  return s <= 1 ? 1.0 : std::sqrt(1 + std::log(s) / std::log(l.orig));
}

namespace scaling {

inline double attention_factor(const LongRope& l, Convention) { return longrope_attention_factor(l); }
/// A factor that max / orig contradicts: the factor is used, as in HF.
inline std::vector<std::string> notes(const LongRope& l) {
  if (!l.factor || !l.max || *l.max / l.orig == *l.factor) return {};
  return {fmt::format("longrope.max = {} gives max / orig = {}, not factor = {}: factor sets the attention factor, as "
                      "transformers does",
                      format_number(*l.max), format_number(*l.max / l.orig), format_number(*l.factor))};
}

/// @throws InputError "longrope.<short|long> = a list of <m> values (must be one value per frequency: <n><note>)".
inline void check_one_per_frequency(const LongRope& l, const Where& where, std::size_t count, std::string_view note) {
  for (const auto* list : {&l.short_factor, &l.long_factor})
    if (list->size() != count)
      throw_bad_value(where, list == &l.short_factor ? "longrope.short" : "longrope.long",
                      fmt::format("a list of {} values", list->size()),
                      fmt::format("one value per frequency: {}{}", count, note));
}
inline const std::vector<double>& active_factors(const LongRope& l, std::optional<double> seq_len) {
  return seq_len && *seq_len > l.orig ? l.long_factor : l.short_factor;
}

/// HF on a geometric schedule: 1 / (ext_factor * base ** (arange(0, dim, 2).float() / dim)).
template <class T>
Scaled<T> scale(const LongRope& l, const GeometricInput<T>& in) {
  check_one_per_frequency(l, in.where, static_cast<std::size_t>(in.count), " (count, default r/2)");
  const std::vector<double>& lambda = active_factors(l, in.seq_len);
  Scaled<T> out{std::vector<T>(lambda.size()), longrope_attention_factor(l)};
  const T b = static_cast<T>(in.base), rr = static_cast<T>(in.r);
  for (std::size_t i = 0; i < lambda.size(); ++i) {
    if constexpr (std::is_same_v<T, double>)  // float64: theta_i / lambda_i on the one grid formula
      out.theta[i] = geometric_frequency(in.base, static_cast<int>(i), in.r) / lambda[i];
    else
      out.theta[i] = T(1) / (static_cast<T>(lambda[i]) * torch_powf(b, static_cast<T>(2 * i) / rr));
  }
  return out;
}
template <class T>
Scaled<T> scale(const LongRope& l, const ExplicitInput<T>& in) {
  check_one_per_frequency(l, in.where, in.unscaled.size(), "");
  const std::vector<double>& lambda = active_factors(l, in.seq_len);
  Scaled<T> out{std::vector<T>(in.unscaled.size()), longrope_attention_factor(l)};
  for (std::size_t i = 0; i < out.theta.size(); ++i) out.theta[i] = in.unscaled[i] / static_cast<T>(lambda[i]);
  return out;
}
inline double* factor_of(LongRope&) { return nullptr; }
inline std::optional<double> original_length(const LongRope& l) { return l.orig; }

/// Not ggml_rope_ext's arguments (a GGUF's rope_freqs factors).
inline std::optional<GgmlRope> ggml_rope(const LongRope&, double, int, int) { return std::nullopt; }

}  // namespace scaling
}  // namespace ropekit
