#pragma once
// Proportional RoPE (p-RoPE; Barbero et al., "Round and round we go", 2024; transformers 5
// _compute_proportional_rope_parameters, Gemma 4's full-attention layers): k = floor(p n / 2) pairs rotate with
// theta_i = base^{-2i/n} / factor, i < k, the exponent over the whole head n (GPT-NeoX partial rotation uses the
// rotated width r = p n instead); the other n/2 - k pairs have theta = 0, i.e. they are identity planes.

#include <cmath>

#include <fmt/format.h>

#include "ropekit/encodings/scaling/linear.hpp"  // divided
#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit::scaling {

struct Proportional {
  double factor = 1;  ///< finite, > 0 (below 1: a note); transformers' default 1
  static constexpr std::string_view name = "proportional";
  static constexpr bool needs_seq_len = false;
  /// transformers' inverse-frequency buffer holds the pairs it leaves unrotated as zero frequencies (cos 1, sin 0)
  static constexpr bool zero_identity_pairs = true;
};

inline std::span<const Key<Proportional>> scheme_keys(const Proportional&) {
  static const Key<Proportional> keys[] = {
      key<&Proportional::factor>("factor", Rule::factor, false)
          .about("the divisor of the rotating frequencies", "factor")};
  return keys;
}
inline double attention_factor(const Proportional&, Convention) { return 1; }
inline std::vector<std::string> notes(const Proportional&) { return {}; }
/// The live pairs k = int(p * n // 2), as transformers computes it (Python: float product, floor division by 2).
inline int proportional_pairs(int dim, double partial) { return static_cast<int>(std::floor(partial * dim / 2)); }
template <class T>
Scaled<T> scale(const Proportional& s, const GeometricInput<T>& in) {
  const int k = proportional_pairs(in.dim, in.partial);
  if (k < 1)
    throw_bad_value(in.where, "partial", fmt::format("{}", in.partial),
                    fmt::format("such that floor(partial * dim / 2) >= 1 for scaling proportional (dim = {}; with no "
                                "rotating pair the encoding is nope)",
                                in.dim));
  if (in.count != (in.r + 1) / 2)
    throw_bad_value(in.where, "count", std::to_string(in.count),
                    "left out with scaling proportional (it rotates floor(partial * dim / 2) pairs)");
  std::vector<T> grid = geometric_grid<T>(in.base, in.dim, k);  // HF: 1 / base ** (arange(0, 2k, 2) / n)
  Scaled<T> out{divided(grid, s.factor)};                         // HF: inv_freq /= factor (zeros stay zeros)
  out.unscaled = std::move(grid);
  out.identity_dims = in.dim - 2 * k;  // the zero-frequency pairs
  return out;
}
template <class T>
Scaled<T> scale(const Proportional&, const ExplicitInput<T>& in) {
  refuse_explicit(in.where, Proportional::name);
}
inline double* factor_of(Proportional& s) { return &s.factor; }
inline std::optional<double> original_length(const Proportional&) { return std::nullopt; }

/// Not ggml_rope_ext's arguments (not in ggml_rope_ext).
inline std::optional<GgmlRope> ggml_rope(const Proportional&, double, int, int) { return std::nullopt; }

}  // namespace ropekit::scaling
