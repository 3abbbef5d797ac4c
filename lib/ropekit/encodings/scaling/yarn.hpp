#pragma once
// YaRN (Peng et al. 2023, arXiv 2309.00071): NTK-by-parts with a linear ramp between the correction dims
// low = floor(d(beta_fast)), high = ceil(d(beta_slow)), d(b) = r ln(orig/(2 pi b)) / (2 ln base), clamped to
// [0, r-1] (r = rotary dims, as HF passes dim = int(head_dim * partial_rotary_factor)); e_i = 1 - clamp((i - low)/
// (high - low), 0, 1); theta'_i = (theta_i/s)(1 - e_i) + theta_i e_i. Attention factor (HF):
// attention_factor if given; else mscale(s, mscale)/mscale(s, mscale_all_dim) if both are given and non-zero;
// else mscale(s, 1); mscale(s, m) = 0.1 m ln s + 1 (1 for s <= 1). A lone (or zero) mscale or mscale_all_dim is
// ignored, as in HF. The factor s is `factor`, or max / orig without it (HF: max_position_embeddings /
// original_max_position_embeddings when factor is None); beta_fast = 0 means 32 and beta_slow = 0 means 1 (HF's
// `or 32`, `or 1`). Under Convention::ggml, llama.cpp's rope_yarn (see Convention).

#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit {

namespace scaling {

struct Yarn {
  std::optional<double> factor{};  ///< s, finite, > 0 (below 1: a note); absent: max / orig
  double orig = 0;                 ///< L0, finite, > 1; required (0: not given, refused)
  double beta_fast = 32;           ///< finite, >= 0 (0 means 32); not above beta_slow: a note
  double beta_slow = 1;            ///< finite, >= 0 (0 means 1)
  bool truncate = true;            ///< floor/ceil the correction dims (HF default; false keeps them real)
  std::optional<double> mscale{}, mscale_all_dim{};  ///< each finite, >= 0 (0: ignored, as in HF)
  std::optional<double> attention_factor{};          ///< finite, > 0: overrides the mscale rule
  std::optional<double> max{};  ///< HF's max_position_embeddings, finite, > 0: s = max / orig when factor is absent
  static constexpr std::string_view name = "yarn";
  static constexpr bool needs_seq_len = false;
  static constexpr bool zero_identity_pairs = false;
};

inline std::span<const Key<Yarn>> scheme_keys(const Yarn&) {
  static const Key<Yarn> keys[] = {
      key<&Yarn::factor>("factor", Rule::factor, false, "max")
          .about("the extension factor s (unset: max / orig)", "factor"),
      key<&Yarn::orig>("orig", Rule::orig, true)
          .about(kOrigMeaning, "original_max_position_embeddings"),
      key<&Yarn::max>("max", Rule::positive)
          .about(kMaxMeaning, "config.max_position_embeddings"),
      key<&Yarn::beta_fast>("beta_fast", Rule::nonnegative)
          .about("rotations that end the ramp on the fast side (0 means 32)", "beta_fast"),
      key<&Yarn::beta_slow>("beta_slow", Rule::nonnegative)
          .about("rotations that end the ramp on the slow side (0 means 1)", "beta_slow"),
      key<&Yarn::truncate>("truncate").about("floor and ceil the correction dims (false: keep them real)", "truncate"),
      key<&Yarn::mscale>("mscale", Rule::nonnegative)
          .about("m of mscale(s, m) over mscale(s, mscale_all_dim) in the attention factor (unset or 0: ignored)",
                 "mscale"),
      key<&Yarn::mscale_all_dim>("mscale_all_dim", Rule::nonnegative)
          .about("m of the denominator of that ratio (unset or 0: ignored)", "mscale_all_dim"),
      key<&Yarn::attention_factor>("attention_factor", Rule::positive)
          .about("the factor a on cos and sin (unset: the mscale ratio, else 0.1 ln s + 1)", "attention_factor"),
  };
  return keys;
}
/// The factor s: `factor`, else max / orig (HF). Call on a checked scheme (check_keys: one of them is given).
inline double yarn_factor(const Yarn& y) { return y.factor ? *y.factor : *y.max / y.orig; }
/// HF's fallbacks: beta_fast or 32, beta_slow or 1.
inline double yarn_beta_fast(const Yarn& y) { return y.beta_fast == 0 ? 32 : y.beta_fast; }
inline double yarn_beta_slow(const Yarn& y) { return y.beta_slow == 0 ? 1 : y.beta_slow; }
/// What transformers accepts and ropekit notes: beta_fast not above beta_slow (the ramp runs backwards), a zero
/// beta or mscale (its fallback), a factor that max / orig contradicts.
std::vector<std::string> notes(const Yarn& y);
/// yarn_attention_factor below.
double attention_factor(const Yarn& y, Convention convention);
/// HF _compute_yarn_parameters, or llama.cpp's rope_yarn under Convention::ggml (in float32: on ggml's running
/// product of frequencies, with its float attention factor).
/// @throws InputError for an odd r (HF's ramp has r // 2 values for (r + 1) / 2 frequencies: torch refuses).
template <class T>
Scaled<T> scale(const Yarn& y, const GeometricInput<T>& in);
/// llama.cpp's per-pair extrapolation weight ramp_mix_i = 1 - clamp((i - low) / max(0.001, high - low), 0, 1) with
/// ggml_rope_yarn_corr_dims' truncated correction dims (in T: float as ggml computes them), for `count` pairs.
template <class T>
std::vector<T> ggml_yarn_ramp_mix(const Yarn& y, double base, int r, int count);
/// Refused: YaRN is defined through a base.
template <class T>
Scaled<T> scale(const Yarn& y, const ExplicitInput<T>& in);
/// The factor, made explicit (s = max / orig, max dropped) where only max was given, so it can be tuned.
inline double* factor_of(Yarn& y) {
  if (!y.factor) {
    y.factor = yarn_factor(y);
    y.max.reset();
  }
  return &*y.factor;
}
inline std::optional<double> original_length(const Yarn& y) { return y.orig; }

/// freq_scale = 1/s and rope_yarn's ramp mix per pair, in float as ggml computes them; attn_factor the file's.
inline std::optional<GgmlRope> ggml_rope(const Yarn& y, double base, int r, int count) {
  return GgmlRope{1.0f / static_cast<float>(yarn_factor(y)), ggml_yarn_ramp_mix<float>(y, base, r, count),
                  static_cast<float>(y.attention_factor.value_or(1.0))};
}

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
