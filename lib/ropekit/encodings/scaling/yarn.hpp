#pragma once
// YaRN (Peng et al. 2023, arXiv 2309.00071): NTK-by-parts with a linear ramp between the correction dims
// low = floor(d(beta_fast)), high = ceil(d(beta_slow)), d(b) = r ln(orig/(2 pi b)) / (2 ln base), clamped to
// [0, r-1] (r = rotary dims, as HF passes dim = head_dim * partial_rotary_factor); e_i = 1 - clamp((i - low)/
// (high - low), 0, 1); theta'_i = (theta_i/s)(1 - e_i) + theta_i e_i. Attention factor (HF):
// attention_factor if given; else mscale(s, mscale)/mscale(s, mscale_all_dim) if both are given (HF: both
// non-zero); else mscale(s, 1); mscale(s, m) = 0.1 m ln s + 1 (1 for s <= 1). A lone mscale or mscale_all_dim
// is ignored, as in HF. Under Convention::ggml, llama.cpp's rope_yarn (see Convention).

#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit {

namespace scaling {

struct Yarn {
  double factor = 1;      ///< s, finite, >= 1
  double orig = 4096;     ///< L0, finite, > 1
  double beta_fast = 32;  ///< finite, > beta_slow
  double beta_slow = 1;   ///< finite, > 0
  bool truncate = true;   ///< floor/ceil the correction dims (HF default; false keeps them real)
  std::optional<double> mscale{}, mscale_all_dim{};  ///< each finite, > 0
  std::optional<double> attention_factor{};      ///< finite, > 0: overrides the mscale rule
  static constexpr std::string_view name = "yarn";
  static constexpr bool needs_seq_len = false;
};

inline std::span<const Key<Yarn>> scheme_keys(const Yarn&) {
  static const Key<Yarn> keys[] = {
      key<&Yarn::factor>("factor", Rule::factor, true),
      key<&Yarn::orig>("orig", Rule::orig),
      key<&Yarn::beta_fast>("beta_fast", Rule::finite, false, "beta_slow"),
      key<&Yarn::beta_slow>("beta_slow", Rule::positive),
      key<&Yarn::truncate>("truncate"),
      key<&Yarn::mscale>("mscale", Rule::positive),
      key<&Yarn::mscale_all_dim>("mscale_all_dim", Rule::positive),
      key<&Yarn::attention_factor>("attention_factor", Rule::positive),
  };
  return keys;
}
/// yarn_attention_factor below.
double attention_factor(const Yarn& y, Convention convention);
/// HF _compute_yarn_parameters, or llama.cpp's rope_yarn under Convention::ggml (in float32: on ggml's running
/// product of frequencies, with its float attention factor).
template <class T>
Scaled<T> scale(const Yarn& y, const GeometricInput<T>& in);
/// Refused: YaRN is defined through a base.
template <class T>
Scaled<T> scale(const Yarn& y, const ExplicitInput<T>& in);
inline double* factor_of(Yarn& y) { return &y.factor; }
inline std::optional<double> original_length(const Yarn& y) { return y.orig; }

}  // namespace scaling

/// YaRN correction range (HF find_correction_range, float64): the correction dims d(beta_fast), d(beta_slow)
/// for r rotary dims, floored / ceiled when y.truncate, then clamped to [0, r - 1].
struct CorrectionRange {
  double low = 0, high = 0;
};
CorrectionRange yarn_correction_range(const scaling::Yarn& y, int rotary_dims, double base);
/// mscale(s, m) = 0.1 m ln s + 1 for s > 1, else 1 (YaRN's attention factor; HF get_mscale).
double yarn_mscale(double factor, double m = 1);
/// The attention factor a of a YaRN scheme under a convention (see scaling::Yarn and Convention).
/// @throws InputError for a broken key, or under ggml for truncate = false or a given mscale / mscale_all_dim.
double yarn_attention_factor(const scaling::Yarn& y, Convention convention = Convention::huggingface);

}  // namespace ropekit
