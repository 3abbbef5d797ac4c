#pragma once
// Frequency schedules: the theta_i that rope, damped, jordan and rf-rope share, scaled by the context-scaling
// schemes of spec encodings.md section 3 (HuggingFace transformers modeling_rope_utils.py, in float64), one header
// each under encodings/scaling/. One place computes theta_i; every encoding family asks this header for its
// frequencies.
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
#include "ropekit/encodings/scaling/schemes.hpp"  // Scaling, Convention, geometric_frequency
#include "ropekit/spectral/rf_estimator.hpp"  // Sampling
#include "ropekit/spectral/spectrum.hpp"      // Spectrum

namespace ropekit {

/// theta_i = base^{-2i/r}, i = 0..count-1, r = rotary dims = int(dim * partial) (HF's
/// `dim = int(head_dim * partial_rotary_factor)`, truncated, >= 1); count defaults to ceil(r/2) (torch's
/// arange(0, r, 2)), whose 2 count dims rotate and the other n - 2 count stay (so an odd r rotates r + 1 dims, as
/// HF's cat(freqs, freqs)); the fixed-basis runs use count = F with r = h (F may differ from h/2).
struct Geometric {
  int dim = 128;             ///< head dim n, an even integer >= 2
  double base = 1e4;         ///< finite, > 0 (> 1 with a scaling scheme)
  std::optional<int> count{};  ///< 1..kMaxFrequencies; default ceil(r/2)
  double partial = 1;        ///< GPT-NeoX rotary fraction in (0, 1]
};
/// int(dim * partial), as HF truncates it (no checks; rotary_dims checks).
inline int truncated_rotary_dims(const Geometric& g) { return static_cast<int>(g.dim * g.partial); }
/// ceil(r/2): the frequencies of HF's arange(0, r, 2), the default count.
inline int default_count(const Geometric& g) { return (truncated_rotary_dims(g) + 1) / 2; }
/// n - 2 ceil(r/2): the dims partial RoPE leaves unrotated.
inline int unrotated_dims(const Geometric& g) { return g.dim - 2 * default_count(g); }
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

struct FrequencyTable {
  Eigen::MatrixXd theta;        ///< rows = frequencies, cols = k (1 for every 1-D schedule): after scaling
  Eigen::MatrixXd unscaled;     ///< the same shape, before the scheme
  double attention_factor = 1;  ///< multiplies cos and sin (so G and the kernel's scores get its square)
  int identity_dims = 0;        ///< n - 2 ceil(r/2): the trailing dims partial RoPE leaves unrotated (0 but for geometric)
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
///         for a dynamic scheme without seq_len, longrope lists of the wrong length, factor <= 0.
FrequencyTable frequencies(const FrequencySchedule& schedule, std::optional<double> seq_len = {},
                           Convention convention = Convention::huggingface, bool float32 = false);

/// The rotary dims r = int(dim * partial) of a geometric source.
/// @throws InputError unless dim is an even integer >= 2 and partial in (0, 1] with r >= 1.
int rotary_dims(const Geometric& g);

/// One line per value that ropekit accepts as transformers does though it warns about it or replaces it (a factor
/// below 1, beta_fast not above beta_slow, a zero beta or mscale, llama3 high not above low, a factor that
/// max / orig contradicts, dim * partial not an even integer), for the caller to show: "yarn.beta_fast = 0 means 32
/// ...". Call on a schedule that frequencies() accepts.
std::vector<std::string> schedule_notes(const FrequencySchedule& schedule);

/// The scheme's name (S::name): "none", "linear", "ntk", "dynamic", "yarn", "longrope", "llama3", "proportional".
std::string scheme_name(const Scaling& s);
/// The scheme's tunable factor (linear, ntk, yarn, llama3), nullptr for the others.
double* tunable_factor(Scaling& s);
/// The scheme's original context L0 (dynamic, yarn, longrope, llama3), none for the others.
std::optional<double> scheme_original_length(const Scaling& s);
/// Whether the scheme's frequencies need the current sequence length (dynamic).
bool scheme_needs_seq_len(const Scaling& s);
/// ggml_rope_ext's arguments for the scheme over r rotary dims and `count` pairs (scaling::GgmlRope); none where
/// llama.cpp does not run it through them (ntk, dynamic, longrope, llama3, proportional).
std::optional<scaling::GgmlRope> scheme_ggml_rope(const Scaling& s, double base, int r, int count);
/// Whether transformers' inverse-frequency buffer holds the pairs the scheme leaves unrotated as zero frequencies.
bool scheme_zero_identity_pairs(const Scaling& s);
/// The nested value that parse_scaling reads back to the same scheme: the scheme name, then every key in its
/// table's order, defaults included (optional keys only where set), numbers in shortest round-trip form, lists as
/// [a,b,c]: "llama3(factor=8,orig=8192,low=1,high=4)", "none" for None.
std::string spelling(const Scaling& s);

/// A scheme from its name and its key=value texts (as the nested-value parser splits
/// `yarn(factor=32,orig=4096)`), list values as "[1,1.05,1.1]". Keys: factor, orig, max, beta_fast, beta_slow,
/// truncate (true/false), mscale, mscale_all_dim, attention_factor, low, high, short, long, each only for the
/// schemes that have it. Required: orig (dynamic, yarn, longrope, llama3: no context length is assumed), factor
/// (linear, ntk, dynamic), factor or max (yarn), short and long (longrope); the rest default as in the structs
/// (`ropekit list schemes`). Parameters are named "<scheme>.<key>", spelled by `where`.
/// @throws InputError for an unknown scheme (listing the known ones), an unknown key (listing the scheme's keys),
///         a missing required key, an unreadable value or a value that breaks its constraint.
Scaling parse_scaling(std::string_view name, const std::map<std::string, std::string>& keys,
                      const Where& where = Where("ropekit"));

/// One row of `ropekit list schemes`: a key of a context-scaling scheme, read from the scheme's key table.
struct SchemeKeyInfo {
  std::string scheme, key;
  std::string default_value;  ///< "required", "required unless <key>", "unset" (an optional key) or the value
  std::string constraint;     ///< what the key's rule accepts: "> 0", "> 1", ">= 0", "true or false", ...
  std::string meaning, hf_key;
};
/// Every key of every scheme: Scaling's alternatives in order, each key table in its (spelling) order.
const std::vector<SchemeKeyInfo>& scheme_key_infos();

/// @throws InputError naming the first broken constraint of the scheme (names "<scheme>.<key>").
void validate(const Scaling& s, const Where& where = Where("ropekit::frequencies"));

}  // namespace ropekit
