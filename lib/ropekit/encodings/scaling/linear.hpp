#pragma once
// Position interpolation (PI, Chen et al. 2023, arXiv 2306.15595): theta'_i = theta_i / factor.

#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit::scaling {

struct Linear {
  double factor = 1;  ///< finite, > 0 (below 1: a note)
  static constexpr std::string_view name = "linear";
  static constexpr bool needs_seq_len = false;
  static constexpr bool zero_identity_pairs = false;
};

inline std::span<const Key<Linear>> scheme_keys(const Linear&) {
  static const Key<Linear> keys[] = {
      key<&Linear::factor>("factor", Rule::factor, true).about("the extension factor s: theta_i / s", "factor")};
  return keys;
}
inline double attention_factor(const Linear&, Convention) { return 1; }
inline std::vector<std::string> notes(const Linear&) { return {}; }
/// inv_freq / factor (HF _compute_linear_scaling_rope_parameters divides positions; the same angles).
template <class T>
std::vector<T> divided(const std::vector<T>& inv, double factor) {
  std::vector<T> out(inv.size());
  for (std::size_t i = 0; i < inv.size(); ++i) out[i] = inv[i] / static_cast<T>(factor);
  return out;
}
template <class T>
Scaled<T> scale(const Linear& l, const GeometricInput<T>& in) {
  return {divided(in.unscaled, l.factor)};
}
template <class T>
Scaled<T> scale(const Linear& l, const ExplicitInput<T>& in) {
  return {divided(in.unscaled, l.factor)};
}
inline double* factor_of(Linear& l) { return &l.factor; }
inline std::optional<double> original_length(const Linear&) { return std::nullopt; }

/// ggml_rope_ext's freq_scale = 1/factor (llama.cpp's LLAMA_ROPE_SCALING_TYPE_LINEAR).
inline std::optional<GgmlRope> ggml_rope(const Linear& l, double, int, int) {
  return GgmlRope{1.0f / static_cast<float>(l.factor)};
}

}  // namespace ropekit::scaling
