#pragma once
// No scheme: theta' = theta.

#include "ropekit/encodings/scaling/scheme.hpp"

namespace ropekit::scaling {

struct None {
  static constexpr std::string_view name = "none";
  static constexpr bool needs_seq_len = false;
  static constexpr bool zero_identity_pairs = false;
};

inline std::span<const Key<None>> scheme_keys(const None&) { return {}; }
inline double attention_factor(const None&, Convention) { return 1; }
inline std::vector<std::string> notes(const None&) { return {}; }
template <class T>
Scaled<T> scale(const None&, const GeometricInput<T>& in) {
  return {in.unscaled};
}
template <class T>
Scaled<T> scale(const None&, const ExplicitInput<T>& in) {
  return {in.unscaled};
}
inline double* factor_of(None&) { return nullptr; }
inline std::optional<double> original_length(const None&) { return std::nullopt; }

inline std::optional<GgmlRope> ggml_rope(const None&, double, int, int) { return GgmlRope{}; }

}  // namespace ropekit::scaling
