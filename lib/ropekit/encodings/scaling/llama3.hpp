#pragma once
// Llama 3.1 (Meta 2024; HF _compute_llama3_parameters): wavelength lambda_i = 2 pi / theta_i; lambda_i < orig/high:
// keep; lambda_i > orig/low: theta_i/factor; otherwise g = (orig/lambda_i - low)/(high - low),
// theta'_i = (1 - g) theta_i/factor + g theta_i. high <= low is accepted with a note, as HF (it only warns): the
// blend band is empty (wavelengths above orig/low are divided, the rest kept), but for a wavelength exactly
// orig/low = orig/high, where HF's blend divides 0 by 0 (refused).

#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit::scaling {

struct Llama3 {
  double factor = 8;  ///< finite, > 0 (below 1: a note)
  double low = 1;     ///< low_freq_factor, finite, > 0
  double high = 4;    ///< high_freq_factor, finite, > 0 (not above low: a note)
  double orig = 0;    ///< L0, finite, > 1; required (0: not given, refused)
  static constexpr std::string_view name = "llama3";
  static constexpr bool needs_seq_len = false;
  static constexpr bool zero_identity_pairs = false;
};

inline std::span<const Key<Llama3>> scheme_keys(const Llama3&) {
  static const Key<Llama3> keys[] = {
      key<&Llama3::factor>("factor", Rule::factor).about("the divisor of the low frequencies", "factor"),
      key<&Llama3::orig>("orig", Rule::orig, true)
          .about(kOrigMeaning, "original_max_position_embeddings"),
      key<&Llama3::low>("low", Rule::positive)
          .about("wavelengths above orig / low are divided by factor", "low_freq_factor"),
      key<&Llama3::high>("high", Rule::positive)
          .about("wavelengths below orig / high are kept; between the two, a blend", "high_freq_factor"),
  };
  return keys;
}
inline double attention_factor(const Llama3&, Convention) { return 1; }
/// high not above low: accepted as HF does (it warns).
std::vector<std::string> notes(const Llama3& l);
/// The scheme on the unscaled frequencies inv, in T (defined for double and float).
/// @throws InputError naming llama3.high where high == low meets a wavelength of exactly orig/low (0/0 in HF).
template <class T>
std::vector<T> llama3_scaled(const std::vector<T>& inv, const Llama3& l, const Where& where);
template <class T>
Scaled<T> scale(const Llama3& l, const GeometricInput<T>& in) {
  return {llama3_scaled(in.unscaled, l, in.where)};
}
template <class T>
Scaled<T> scale(const Llama3& l, const ExplicitInput<T>& in) {
  return {llama3_scaled(in.unscaled, l, in.where)};
}
inline double* factor_of(Llama3& l) { return &l.factor; }
inline std::optional<double> original_length(const Llama3& l) { return l.orig; }

/// Not ggml_rope_ext's arguments (a GGUF's rope_freqs factors).
inline std::optional<GgmlRope> ggml_rope(const Llama3&, double, int, int) { return std::nullopt; }

}  // namespace ropekit::scaling
