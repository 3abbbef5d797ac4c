#pragma once
// Dynamic NTK: at T > orig, base' = base ((factor T / orig) - (factor - 1))^{r/(r-2)}; for T <= orig theta is
// returned unchanged (exactly; HF's formula gives base * 1^{...} there). Needs the current length T.

#include <fmt/format.h>

#include "ropekit/encodings/scaling/ntk.hpp"
#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit::scaling {

struct Dynamic {
  double factor = 1;   ///< finite, > 0 (below 1: a note)
  double orig = 0;     ///< L0, finite, > 1; required (0: not given, refused)
  static constexpr std::string_view name = "dynamic";
  static constexpr bool needs_seq_len = true;
  static constexpr bool zero_identity_pairs = false;
};

inline std::span<const Key<Dynamic>> scheme_keys(const Dynamic&) {
  static const Key<Dynamic> keys[] = {
      key<&Dynamic::factor>("factor", Rule::factor, true)
          .about("the extension factor s: past orig, base' = base (s T / orig - (s - 1))^(r/(r-2))", "factor"),
      key<&Dynamic::orig>("orig", Rule::orig, true)
          .about(kOrigMeaning, "config.max_position_embeddings"),
  };
  return keys;
}
inline double attention_factor(const Dynamic&, Convention) { return 1; }
inline std::vector<std::string> notes(const Dynamic&) { return {}; }
template <class T>
Scaled<T> scale(const Dynamic& d, const GeometricInput<T>& in) {
  require_r4(in.where, in.r, in.dim, Dynamic::name);
  if (!in.seq_len)
    throw InputError(fmt::format("{}: scaling dynamic needs the current sequence length (--seq-len)", in.where.context));
  if (*in.seq_len <= d.orig) return {in.unscaled};
  return {geometric_grid<T>(ntk_base(in.base, in.r, d.factor * *in.seq_len / d.orig - (d.factor - 1)), in.r, in.count)};
}
template <class T>
Scaled<T> scale(const Dynamic&, const ExplicitInput<T>& in) {
  refuse_explicit(in.where, Dynamic::name);
}
inline double* factor_of(Dynamic&) { return nullptr; }  // T sets the effective factor: not tuned
inline std::optional<double> original_length(const Dynamic& d) { return d.orig; }

/// Not ggml_rope_ext's arguments (not in ggml_rope_ext).
inline std::optional<GgmlRope> ggml_rope(const Dynamic&, double, int, int) { return std::nullopt; }

}  // namespace ropekit::scaling
