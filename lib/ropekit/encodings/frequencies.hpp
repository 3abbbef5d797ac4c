#pragma once
// Frequency schedules: the theta_i that rope, damped, jordan and rf-rope share, and the context-scaling
// schemes of spec encodings.md section 3 (HuggingFace transformers modeling_rope_utils.py, in float64).
// One place computes theta_i; every encoding family asks this header for its frequencies.
//
// Every scheme follows HF's arithmetic step by step (the same operations in the same order), so that
// float32 = true (the same steps in float) reproduces what a torch model computes; in float64 the results
// agree with the spec's closed forms (e.g. YaRN's 1/(s B^{2i/r}) vs theta_i/s) to a few ulps.

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"
#include "ropekit/mc/rf_estimator.hpp"  // Sampling
#include "ropekit/spectral/spectrum.hpp"      // Spectrum

namespace ropekit {

namespace scaling {
/// No scheme: theta' = theta.
struct None {};
/// Position interpolation (PI, Chen et al. 2023): theta'_i = theta_i / factor.
struct Linear {
  double factor = 1;  ///< finite, >= 1
};
/// Static NTK-aware: base' = base * factor^{r/(r-2)}, r = rotary dims (>= 4); theta'_i = base'^{-2i/r}.
struct Ntk {
  double factor = 1;  ///< finite, >= 1
};
/// Dynamic NTK: at T > orig, base' = base ((factor T / orig) - (factor - 1))^{r/(r-2)}; for T <= orig theta is
/// returned unchanged (exactly; HF's formula gives base * 1^{...} there). Needs the current length T.
struct Dynamic {
  double factor = 1;   ///< finite, >= 1
  double orig = 4096;  ///< L0, finite, > 1
};
/// YaRN (Peng et al. 2023, arXiv 2309.00071): NTK-by-parts with a linear ramp between the correction dims
/// low = floor(d(beta_fast)), high = ceil(d(beta_slow)), d(b) = r ln(orig/(2 pi b)) / (2 ln base), clamped to
/// [0, r-1] (r = rotary dims, as HF passes dim = head_dim * partial_rotary_factor); e_i = 1 - clamp((i - low)/
/// (high - low), 0, 1); theta'_i = (theta_i/s)(1 - e_i) + theta_i e_i. Attention factor (HF):
/// attention_factor if given; else mscale(s, mscale)/mscale(s, mscale_all_dim) if both are given (HF: both
/// non-zero); else mscale(s, 1); mscale(s, m) = 0.1 m ln s + 1 (1 for s <= 1). A lone mscale or mscale_all_dim
/// is ignored, as in HF.
struct Yarn {
  double factor = 1;      ///< s, finite, >= 1
  double orig = 4096;     ///< L0, finite, > 1
  double beta_fast = 32;  ///< finite, > beta_slow
  double beta_slow = 1;   ///< finite, > 0
  bool truncate = true;   ///< floor/ceil the correction dims (HF default; false keeps them real)
  std::optional<double> mscale{}, mscale_all_dim{};  ///< each finite, > 0
  std::optional<double> attention_factor{};      ///< finite, > 0: overrides the mscale rule
};
/// LongRoPE / Phi-3 "su" (Ding et al. 2024): theta'_i = theta_i / lambda_i, lambda = long_factor when the
/// current length T > orig, else short_factor (so without a T the short factors are used, as HF at init).
/// Both lists have one value per frequency (r/2 for a default geometric schedule; HF requires dim/2).
/// Attention factor: attention_factor if given, else sqrt(1 + ln s / ln orig) with s = max / orig (1 if s <= 1
/// or max is absent).
struct LongRope {
  std::vector<double> short_factor{}, long_factor{};  ///< each value finite, > 0
  double orig = 4096;                             ///< L0, finite, > 1
  std::optional<double> max{};                    ///< max position, finite, > 0; factor s = max / orig
  std::optional<double> attention_factor{};       ///< finite, > 0
};
/// Llama 3.1: wavelength lambda_i = 2 pi / theta_i; lambda_i < orig/high: keep; lambda_i > orig/low:
/// theta_i/factor; otherwise g = (orig/lambda_i - low)/(high - low), theta'_i = (1 - g) theta_i/factor + g theta_i.
struct Llama3 {
  double factor = 8;   ///< finite, >= 1
  double low = 1;      ///< low_freq_factor, finite, > 0
  double high = 4;     ///< high_freq_factor, finite, > low
  double orig = 8192;  ///< L0, finite, > 1
};
}  // namespace scaling

using Scaling = std::variant<scaling::None, scaling::Linear, scaling::Ntk, scaling::Dynamic, scaling::Yarn,
                             scaling::LongRope, scaling::Llama3>;

/// theta_i = base^{-2i/r}, i = 0..count-1, r = rotary dims = dim * partial (must be an even integer >= 2, to
/// 1e-9 relative: HF truncates int(head_dim * partial), which agrees whenever the product is an integer);
/// count defaults to r/2 (RoPE); the fixed-basis runs use count = F with r = h (F may differ from h/2).
struct Geometric {
  int dim = 128;             ///< head dim n, >= 2
  double base = 1e4;         ///< finite, > 0 (> 1 with a scaling scheme)
  std::optional<int> count{};  ///< 1..kMaxFrequencies; default r/2
  double partial = 1;        ///< GPT-NeoX rotary fraction in (0, 1]
};
/// Frequencies given as numbers (a list or a file), used as they are (each finite and > 0).
/// Schemes that work on frequencies apply (linear, llama3, longrope with one factor per value); ntk, dynamic
/// and yarn are defined through a base and are refused.
struct ExplicitFrequencies {
  std::vector<double> values{};  ///< 1..kMaxFrequencies values
  std::string source{};        ///< "" for a list written in the spelling, else the file
};
/// D frequencies drawn from a 1-D or k-D spectral density (RF-RoPE section 2). With a seed: draws from
/// Rng(seed, kStreamScheduleFrequencies, 0), a stream of its own (the fixed draw of an encoding is not the first
/// trial of a Monte Carlo run with the same seed), by the definitions of monte_carlo.cpp: iid = spectral::sample
/// of D draws; antithetic = (D+1)/2 draws w_j placed as (w_j, -w_j) in blocks (2j, 2j+1), an odd last block
/// keeping +w; stratified (k = 1) = w_i = Q((pi_i + U_i)/D), pi a Fisher-Yates permutation drawn first, then the
/// U_i in order. Without a seed: the deterministic quantile grid w_i = Q((i + 1/2)/D) (k = 1 only; sampling iid
/// or stratified; antithetic needs a seed). No scaling scheme applies.
struct SampledFrequencies {
  Spectrum spectrum;
  int count = 32;  ///< D, 1..kMaxFrequencies
  std::optional<std::uint64_t> seed{};
  Sampling sampling = Sampling::iid;
};

struct FrequencySchedule {
  std::variant<Geometric, ExplicitFrequencies, SampledFrequencies> source;
  Scaling scaling{};  ///< None unless a scheme is given; only for Geometric (and explicit) 1-D sources
};

/// Whose arithmetic a scheme follows where implementations differ (only YaRN differs):
/// huggingface: transformers' modeling_rope_utils.py.
/// ggml: llama.cpp's rope_yarn / ggml_rope_yarn_corr_dims: always truncated correction dims (truncate = false
/// is refused), ramp denominator max(0.001, high - low), theta_interp = (1/s) theta; attention factor
/// a = a0 (1 + 0.1 ln s) with a0 = attention_factor (llama.cpp's attn_factor) or 1; mscale / mscale_all_dim are
/// refused (llama.cpp handles them in model graphs, not in the rope kernel). Every other scheme: as huggingface.
enum class Convention { huggingface, ggml };

struct FrequencyTable {
  Eigen::MatrixXd theta;        ///< rows = frequencies, cols = k (1 for every 1-D schedule): after scaling
  Eigen::MatrixXd unscaled;     ///< the same shape, before the scheme
  double attention_factor = 1;  ///< multiplies cos and sin (so G and the kernel's scores get its square)
};

constexpr int kMaxFrequencies = 1 << 24;
/// The seed stream of SampledFrequencies draws (see there).
constexpr std::uint64_t kStreamScheduleFrequencies = 0x52'46'2D'52'4F'50'45;  // "RF-ROPE"

/// The frequencies at current sequence length seq_len (used by dynamic and longrope; others ignore it).
///
/// float32 = true emulates a framework that computes inverse frequencies in float32 and returns those float
/// values widened to double. Huggingface (torch): inv_freq = 1.0f / powf(float(base), float(2i) / float(r)),
/// then each scheme's tensor arithmetic in float with Python scalars (factor, wavelength bounds, 2 pi, ramp
/// bounds) rounded to float as torch does with wrapped numbers; NTK / dynamic bases and attention factors are
/// computed in double as in Python. ggml (YaRN): theta_scale = powf(base, -2.0f/r), theta_i the running float
/// product of theta_scale (ggml_rope_cache_init with position 1: ggml folds the position into that product, so
/// its angles at p != 1 round differently), correction dims with logf, a0 (1 + 0.1f logf(s)) in float.
/// Explicit and sampled values are rounded to float first. Limits: it matches the framework to the accuracy of
/// the float pow / log of its math library (glibc's powf is correctly rounded in practice; torch's vectorised
/// pow may differ by 1 ulp), not bit for bit on every platform.
///
/// @throws InputError "ropekit::frequencies: <name> = <value> (must be <constraint>)" naming the parameter
///         (dim, partial, base, count, seq_len, values, spectrum, sampling, seed, scaling, <scheme>.<key>), e.g.
///         for a dynamic scheme without seq_len, longrope lists of the wrong length, factor < 1.
FrequencyTable frequencies(const FrequencySchedule& schedule, std::optional<double> seq_len = {},
                           Convention convention = Convention::huggingface, bool float32 = false);

/// RoPE's grid theta_i = base^{-2i/r} (RoFormer eq. 15; fixed-basis.md omega_k = theta^(-2k/h)): the one place the
/// grid is written. The fixed-basis features, the targets, RoPE's kernel, axial N-D RoPE (r = 2K per axis) and
/// geometric schedules in float64 all call it, so they agree bit for bit.
inline double geometric_frequency(double base, int i, int r) { return std::pow(base, -2.0 * i / r); }

/// The rotary dims r = dim * partial of a geometric source. @throws InputError unless an even integer >= 2.
int rotary_dims(const Geometric& g);

/// YaRN correction range (HF find_correction_range, float64): the correction dims d(beta_fast), d(beta_slow)
/// for r rotary dims, floored / ceiled when y.truncate, then clamped to [0, r - 1].
struct CorrectionRange {
  double low = 0, high = 0;
};
CorrectionRange yarn_correction_range(const scaling::Yarn& y, int rotary_dims, double base);
/// mscale(s, m) = 0.1 m ln s + 1 for s > 1, else 1 (YaRN's attention factor; HF get_mscale).
double yarn_mscale(double factor, double m = 1);
/// The attention factor a of a YaRN scheme under a convention (see scaling::Yarn and Convention).
double yarn_attention_factor(const scaling::Yarn& y, Convention convention = Convention::huggingface);
/// The attention factor of a LongRoPE scheme (see scaling::LongRope).
double longrope_attention_factor(const scaling::LongRope& l);
/// base * factor^{r/(r-2)} (static NTK; dynamic NTK with factor (s T / L0) - (s - 1)).
double ntk_base(double base, int rotary_dims, double factor);

/// "none", "linear", "ntk", "dynamic", "yarn", "longrope", "llama3".
std::string scheme_name(const Scaling& s);
/// The nested value that parse_scaling reads back to the same scheme: the scheme name, then factor and orig
/// (where the scheme has them), then every other key that is set or differs from its default, numbers in
/// shortest round-trip form, lists as [a,b,c]: "yarn(factor=32,orig=4096)", "none" for None.
std::string spelling(const Scaling& s);

/// A scheme from its name and its key=value texts (as the nested-value parser splits
/// `yarn(factor=32,orig=4096)`), list values as "[1,1.05,1.1]". Keys: factor, orig, max, beta_fast, beta_slow,
/// truncate (true/false), mscale, mscale_all_dim, attention_factor, low, high, short, long, each only for the
/// schemes that have it. Required: factor (linear, ntk, dynamic, yarn), short and long (longrope); the rest
/// default as in the structs. Parameters are named "<scheme>.<key>", spelled by `where`.
/// @throws InputError for an unknown scheme (listing the known ones), an unknown key (listing the scheme's keys),
///         a missing required key, an unreadable value or a value that breaks its constraint.
Scaling parse_scaling(std::string_view name, const std::map<std::string, std::string>& keys,
                      const Where& where = Where("ropekit"));

/// "[1,1.05,1.1]" -> {1, 1.05, 1.1}: square brackets, comma-separated numbers, spaces allowed around them.
/// @throws InputError naming `name` for missing brackets, an empty list or an entry that is not a number.
std::vector<double> parse_bracketed_numbers(std::string_view text, const Where& where, std::string_view name);

/// @throws InputError naming the first broken constraint of the scheme (names "<scheme>.<key>").
void validate(const Scaling& s, const Where& where = Where("ropekit::frequencies"));

}  // namespace ropekit
