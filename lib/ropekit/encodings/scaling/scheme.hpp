#pragma once
// What every context-scaling scheme provides (spec encodings.md section 3; HuggingFace transformers
// modeling_rope_utils.py), and what frequencies() hands it. A scheme is a struct in namespace ropekit::scaling
// with, in its own header:
//   static constexpr std::string_view name;           its spelling ("yarn")
//   scheme_keys(const S&) -> std::span<const Key<S>>   its key table (keys.hpp): parse, spelling, validation
//   attention_factor(const S&, Convention) -> double   the factor multiplying cos and sin (1 for most schemes)
//   notes(const S&) -> std::vector<std::string>        one line per value accepted as transformers does though it
//                                                      warns or falls back (beside rule_notes of keys.hpp)
//   scale(const S&, const GeometricInput<T>&)         theta' of a geometric schedule, T = double and float
//   scale(const S&, const ExplicitInput<T>&)          theta' of frequencies given as numbers (or a refusal)
//   ggml_rope(const S&, base, r, count) -> optional<GgmlRope>  ggml's rope kernel arguments (none: llama.cpp does
//                                                      not run the scheme through them)
// and the traits needs_seq_len (the frequencies depend on the current length T), zero_identity_pairs, factor_of
// (the tunable factor) and original_length (L0). ScalingScheme checks all of it, so a scheme that forgets one does not compile.

#include <cmath>
#include <concepts>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/encodings/scaling/keys.hpp"

namespace ropekit {

/// Whose arithmetic a scheme follows where implementations differ (only YaRN differs):
/// huggingface: transformers' modeling_rope_utils.py.
/// ggml: llama.cpp's rope_yarn / ggml_rope_yarn_corr_dims: always truncated correction dims (truncate = false
/// is refused), ramp denominator max(0.001, high - low), theta_interp = (1/s) theta; attention factor
/// a = a0 (1 + 0.1 ln s) with a0 = attention_factor (llama.cpp's attn_factor) or 1; mscale / mscale_all_dim are
/// refused (llama.cpp handles them in model graphs, not in the rope kernel). Every other scheme: as huggingface.
enum class Convention { huggingface, ggml };

/// RoPE's grid theta_i = base^{-2i/r} (RoFormer eq. 15; fixed-basis.md omega_k = theta^(-2k/h)): the one place the
/// grid is written. The fixed-basis features, the targets, RoPE's kernel, axial N-D RoPE (r = 2K per axis) and
/// geometric schedules in float64 all call it, so they agree bit for bit.
inline double geometric_frequency(double base, int i, int r) { return std::pow(base, -2.0 * i / r); }

namespace scaling {

/// float ** float as PyTorch's CPU pow kernel computes it (SLEEF's powf_u10: bit for bit with torch 2.11's CPU
/// buffers in tests/data/transformers/pow.csv, where glibc's powf differs in 4 of 336 entries).
float torch_powf(float base, float exponent);

/// HF: inv_freq = 1.0 / (base ** (arange(0, dim, 2).float() / dim)) in T (double: geometric_frequency).
template <class T>
std::vector<T> geometric_grid(double base, int r, int count);
/// ggml_rope_cache_init at position 1: theta_0 = 1, theta_{i+1} = theta_i * powf(base, -2/r), in T.
template <class T>
std::vector<T> ggml_grid(double base, int r, int count);

/// A geometric schedule as a scheme sees it: r rotary dims, count frequencies, the unscaled grid in T.
template <class T>
struct GeometricInput {
  double base = 1e4;
  int dim = 2;  ///< head dim n (r = rotary dims = int(n * partial))
  double partial = 1;
  int r = 2, count = 1;
  const std::vector<T>& unscaled;
  std::optional<double> seq_len;
  Convention convention = Convention::huggingface;
  const Where& where;
};
/// Frequencies given as numbers, in T.
template <class T>
struct ExplicitInput {
  const std::vector<T>& unscaled;
  std::optional<double> seq_len;
  const Where& where;
};
/// A scheme's result: theta' and the attention factor; `unscaled` replaces the input grid where the scheme's
/// convention computes its own (ggml's running product).
template <class T>
struct Scaled {
  std::vector<T> theta;
  double attention_factor = 1;
  std::optional<std::vector<T>> unscaled{};
  std::optional<int> identity_dims{};  ///< replaces n - 2 ceil(r/2) where the scheme rotates other pairs (proportional)
};

/// What ggml_rope_ext takes of a scheme besides the base (llama.cpp ggml/src/ggml-cpu/ops.cpp, ggml_rope_cache_init
/// and rope_yarn): freq_scale (1/s), rope_yarn's extrapolation weight per pair (empty: none, theta_interp only) and
/// attn_factor (rope_yarn's mscale before its YaRN correction).
struct GgmlRope {
  float freq_scale = 1;
  std::vector<float> ramp{};
  float attn_factor = 1;
};

/// @throws InputError "dim = <n> (must be such that the rotary dims are >= 4 for scaling <name> ...)" if r < 4.
void require_r4(const Where& where, int r, int dim, std::string_view scheme);
/// @throws InputError "scaling = <name> (must be none, linear, llama3 or longrope for explicit frequencies ...)".
[[noreturn]] void refuse_explicit(const Where& where, std::string_view scheme);

template <class S>
concept ScalingScheme = std::default_initializable<S> && requires(const S& s, S& m, Convention c,
                                                                 const GeometricInput<double>& gd,
                                                                 const GeometricInput<float>& gf,
                                                                 const ExplicitInput<double>& ed,
                                                                 const ExplicitInput<float>& ef) {
  { S::name } -> std::convertible_to<std::string_view>;
  { S::needs_seq_len } -> std::convertible_to<bool>;
  { S::zero_identity_pairs } -> std::convertible_to<bool>;
  { scheme_keys(s) } -> std::convertible_to<std::span<const Key<S>>>;
  { attention_factor(s, c) } -> std::same_as<double>;
  { notes(s) } -> std::same_as<std::vector<std::string>>;
  { scale(s, gd) } -> std::same_as<Scaled<double>>;
  { scale(s, gf) } -> std::same_as<Scaled<float>>;
  { scale(s, ed) } -> std::same_as<Scaled<double>>;
  { scale(s, ef) } -> std::same_as<Scaled<float>>;
  { factor_of(m) } -> std::same_as<double*>;
  { original_length(s) } -> std::same_as<std::optional<double>>;
  { ggml_rope(s, 1e4, 2, 1) } -> std::same_as<std::optional<GgmlRope>>;
};

}  // namespace scaling
}  // namespace ropekit
