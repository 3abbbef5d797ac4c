#pragma once
// Position-wise Jordan-RoPE (spec nd-rope.md section 2; Jordan-RoPE paper section 3.1, Proposition 1,
// section 4 and appendix A). G(d) is the realified order-m block of jordan_block.hpp and A(t) = G(-t).
//   queries q~ = A(i - c0)^{-T} q,  keys k~ = A(j - c0) k,
//   q~ . k~ = q^T A(i - c0)^{-1} A(j - c0) k = q^T G(i - j) k            (Prop 1; any c0, appendix A)
// when G is a one-parameter group, G(s) G(t) = G(s + t). Plain factorization: c0 = 0.
// Variants (paper section 4), L the training context:
//   raw         gamma, eta, shear time s(t) = t                      exact
//   scaled      gamma = c/L, eta -> eta/L, s(t) = t                   exact (a different generator)
//   stabilized  gamma, eta, s(t) = tau(t) = t / (1 + |t|/L)           not a representation
// (tau is odd, as in the reference implementation's effective_shear_time, so that it is defined at t < 0.)
// For every variant A(t)^{-1} = G(t) in closed form: the damped rotation inverts by t -> -t and
// exp(eta s N)^{-1} = exp(-eta s N) with s odd in t. The queries use A(t)^{-T} = G(t)^T.
//
// Scores are measured for unit queries and keys, i.e. the whole bilinear form S(i, j) = A(i-c0)^{-1} A(j-c0)
// (2m x 2m), over causal pairs j <= i of a deterministic sample of window positions.
// The float32 path is a float32 model's: t = float(p) - float(c0), the parameters, exp, the powers of the
// shear and cos / sin in float32, then S32 = A32(i)^{-T}^T A32(j) with float32 products summed in index order
// without FMA, the same bits on every build (for omega = 1 and integer t the phases omega t are exact, so the
// error is the dynamic range's, not RoPE's phase rounding).

#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/jordan_block.hpp"

namespace ropekit {

enum class JordanVariant { raw, scaled, stabilized };
enum class Factorization { plain, centred };

const char* to_string(JordanVariant v);
const char* to_string(Factorization f);

struct PositionwiseParams {
  int m = 3;                    ///< order, 1 <= m <= kMaxJordanOrder
  double c = 1.0;               ///< scaled damping gamma = c/L; finite, >= 0
  double eta = 0.1;             ///< nilpotent amplitude, finite (scaled uses eta/L)
  std::optional<double> gamma;  ///< raw and stabilized damping, finite, >= 0; default c/L (the scaled damping)
  double omega = 1.0;           ///< rotary frequency, finite
  int train_context = 1024;     ///< L >= 1

  /// @throws InputError naming the parameter, spelled by `where` (m -> --m, train_context -> --train-context).
  void validate(const Where& where = Where("position-wise parameters")) const;
};

/// The variant's block: m, omega and its effective gamma and eta.
JordanBlock variant_block(const PositionwiseParams& p, JordanVariant v);
/// Shear time s(t): t, or tau(t) = t / (1 + |t|/L) for the stabilized variant.
double shear_time(const PositionwiseParams& p, JordanVariant v, double t);
/// The explicit pairwise kernel G_v(d), 2m x 2m (G_stab(d) for the stabilized variant).
Eigen::MatrixXd relative_kernel(const PositionwiseParams& p, JordanVariant v, double d);
/// Key factor A(t) = G_v(-t), 2m x 2m.
Eigen::MatrixXd key_factor(const PositionwiseParams& p, JordanVariant v, double t);
/// Query factor A(t)^{-T} = G_v(t)^T (closed-form inverse), 2m x 2m.
Eigen::MatrixXd query_factor(const PositionwiseParams& p, JordanVariant v, double t);

struct PositionwiseOptions {
  int window = 8192;             ///< W, 2 <= W <= 2^24: positions 0..W-1
  std::optional<double> center;  ///< c0 of the centred factorization, finite; default (W-1)/2 (mid-window)
  int samples = 257;             ///< 2..4097 positions, evenly spaced with both ends (+ the centre)

  /// @throws InputError naming the option, spelled by `where`.
  void validate(const Where& where = Where("position-wise options")) const;
  double resolved_center() const { return center.value_or((window - 1) / 2.0); }
};

/// Checks a priori that every number measure_positionwise_all forms stays finite: in the float32 path
/// (the factors e^{-gamma t} (eta s)^p/p! R(omega t) for |t| up to T = max(W - 1, |c0|, |W - 1 - c0|), their
/// 2m-term products, the phases omega t) and in float64 (the same, the kernels at lags up to 2(W - 1) of the
/// group law, and the rounding bound), with a margin of 4m for sums and running products. The bounds are
/// in logarithms: ln|entry| <= gamma t + max_p [p ln(|eta| s) - ln p!].
/// @throws InputError naming the first parameter of `blame` (spellings as in PositionwiseParams: omega,
///         gamma, c, eta; PositionwiseOptions: window, center) whose reduction alone makes every number finite,
///         with its largest admissible value.
void check_positionwise_range(const PositionwiseParams& p, const PositionwiseOptions& o, const Where& where,
                              const std::vector<std::string>& blame = {"omega", "gamma", "c", "eta", "window",
                                                                       "center"});

/// Estimated memory and run time of measure_positionwise_all (budget.hpp): 6 rows of W dynamic-range
/// evaluations and P(P+1)/2 pairs of (2m x 2m) products, P ~ samples. @throws nothing.
Cost positionwise_cost(const PositionwiseParams& p, const PositionwiseOptions& o);

/// One (variant, factorization) measurement. "Largest score" = the largest |entry| of the reference
/// bilinear forms over the sampled pairs.
struct PositionwiseRow {
  JordanVariant variant = JordanVariant::raw;
  Factorization factorization = Factorization::plain;
  int m = 0, window = 0;
  double center = 0;              ///< c0 used (0 for plain)
  double gamma = 0, eta = 0;      ///< effective damping and amplitude
  double max_query_factor = 0;    ///< max_{p in window} max |entry of A(p - c0)^{-T}|  (every position)
  double max_key_factor = 0;      ///< max_{p in window} max |entry of A(p - c0)|        (every position)
  double cancellation = 0;        ///< kappa = max (|A(i-c0)^{-T}|^T |A(j-c0)|) / largest |G(i - j)|
  double relativity_defect = 0;   ///< max |S64(i, j) - G(i - j)| / largest |G(i - j)|, float64
  double rounding_bound = 0;      ///< u kappa (6m + 4 + 2 (gamma + |omega|) t_max), u = 2^-53 (see .cpp)
  double f32_score_error = 0;     ///< max |S32(i, j) - S64(i, j)| / largest |S64| (float32 path, see below)
  double f32_lag_error = 0;       ///< max over pairs of max |S32(i, j) - S64(i, j)| / max |G(i - j)|: each score
                                  ///< against the kernel at its own lag
  double group_law_defect = 0;    ///< max |G(s) G(t) - G(s + t)| / largest |G(s + t)|, s, t sampled lags
  std::int64_t pairs = 0;         ///< causal pairs measured
};

/// @throws InputError for invalid parameters or options.
PositionwiseRow measure_positionwise(const PositionwiseParams& p, JordanVariant v, Factorization f,
                                     const PositionwiseOptions& options);

/// The six rows raw, scaled, stabilized x plain, centred (in that order).
std::vector<PositionwiseRow> measure_positionwise_all(const PositionwiseParams& p, const PositionwiseOptions& options);

/// The sampled positions: round(k (W-1) / (S-1)), k < S, plus floor/ceil of c0 when centred, sorted, distinct.
std::vector<int> sample_positions(int window, int samples, std::optional<double> center);

}  // namespace ropekit
