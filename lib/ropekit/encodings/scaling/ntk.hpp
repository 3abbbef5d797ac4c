#pragma once
// Static NTK-aware scaling: base' = base * factor^{r/(r-2)}, r = rotary dims (>= 4); theta'_i = base'^{-2i/r}.

#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit {

/// base * factor^{r/(r-2)} (static NTK; dynamic NTK with factor (s T / L0) - (s - 1)).
inline double ntk_base(double base, int rotary_dims, double factor) {
  return base * std::pow(factor, static_cast<double>(rotary_dims) / (rotary_dims - 2));
}

namespace scaling {

struct Ntk {
  double factor = 1;  ///< finite, > 0 (below 1: a note)
  static constexpr std::string_view name = "ntk";
  static constexpr bool needs_seq_len = false;
  static constexpr bool zero_identity_pairs = false;
};

inline std::span<const Key<Ntk>> scheme_keys(const Ntk&) {
  static const Key<Ntk> keys[] = {
      key<&Ntk::factor>("factor", Rule::factor, true)
          .about("the extension factor s: base' = base s^(r/(r-2))", "factor")};
  return keys;
}
inline double attention_factor(const Ntk&, Convention) { return 1; }
inline std::vector<std::string> notes(const Ntk&) { return {}; }
template <class T>
Scaled<T> scale(const Ntk& n, const GeometricInput<T>& in) {
  require_r4(in.where, in.r, in.dim, Ntk::name);
  return {geometric_grid<T>(ntk_base(in.base, in.r, n.factor), in.r, in.count)};
}
template <class T>
Scaled<T> scale(const Ntk&, const ExplicitInput<T>& in) {
  refuse_explicit(in.where, Ntk::name);
}
inline double* factor_of(Ntk& n) { return &n.factor; }
inline std::optional<double> original_length(const Ntk&) { return std::nullopt; }

/// Not ggml_rope_ext's arguments (a GGUF stores the NTK base as freq_base).
inline std::optional<GgmlRope> ggml_rope(const Ntk&, double, int, int) { return std::nullopt; }

}  // namespace scaling
}  // namespace ropekit
