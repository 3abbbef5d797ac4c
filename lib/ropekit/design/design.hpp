#pragma once
// Inverse design of RF-RoPE frequencies from a target kernel (RF-RoPE Corollary 3, Bochner): every continuous
// positive-definite Phi with Phi(0) = 1 is E[cos(Dp w)] for a symmetric density p(w). From samples of Phi on an
// even lag grid this header estimates p, certifies (or refutes) positive definiteness with a Fejer-tapered
// transform (Herglotz), and draws D frequencies from |w|'s distribution; the realised kernel (1/D) sum cos(w_i Dp)
// and Prop 4's variance of the design measure how well they realise Phi.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <Eigen/Dense>

#include "targets/kernel_table.hpp"

#include "ropekit/core/error.hpp"

namespace ropekit {

struct Encoding;  // ropekit/encoding.hpp

/// Phi sampled on the even grid x_k = k h, k = 0..N-1 (Phi = 0 beyond the last lag: Phi_N = 0 is appended, so the
/// interpolant's last segment falls linearly to 0 at N h).
struct KernelGrid {
  double step = 1;      ///< h, finite, > 0
  Eigen::VectorXd phi;  ///< Phi_k, size N >= 2, finite; Phi_0 = 1 (to 1e-9)
};

/// Tolerance of the Phi(0) = 1 check of a table (values written with ~10 significant digits pass).
constexpr double kPhiZeroTolerance = 1e-9;
/// Tolerance of the even-grid check: |x_k - k h| <= 1e-9 x_{N-1}, h = x_{N-1}/(N-1) (text-rounded grids pass).
constexpr double kEvenGridTolerance = 1e-9;

/// The even grid of a `lag,value` table (targets/kernel_table.hpp reads the file: header, two finite cells per row,
/// strictly increasing lags). Refuses (InputError "<where>: data:<source> = <value> (must be ...)"): a first lag
/// other than 0, fewer than 2 rows, |Phi(0) - 1| > kPhiZeroTolerance, or lags that are not an even grid to
/// kEvenGridTolerance (no resampling: the grid is the user's, the transform needs it even).
KernelGrid kernel_grid(const KernelTable& table, std::string_view where = "ropekit");

/// The density estimate and the positive-definiteness certificate on w_j = j w_max/(M-1), j = 0..M-1,
/// w_max = pi/h (Nyquist).
///   p(w)   = (h/2pi) sinc^2(wh/2) [Phi_0 + 2 sum_{k>=1} Phi_k cos(wkh)]            (the exact transform of the
///            even piecewise-linear interpolant sum_k Phi_k hat((x - kh)/h), Phi_N = 0; integrates to Phi_0 over R)
///   p_F(w) = (h/2pi) sinc^2(wh/2) [Phi_0 + 2 sum_{k>=1} (1 - k/N) Phi_k cos(wkh)]  (Fejer taper)
/// The bracket of p_F is (1/N) E|sum_j X_j e^{ijwh}|^2 >= 0 for a stationary sequence X with covariance Phi_k
/// (Herglotz), so a positive-definite sequence has no negative p_F, without truncation ripples; negative_mass =
/// 2 int_0^{pi/h} max(0, -p_F) dw > tolerance certifies that the sequence is not positive definite.
struct DensityEstimate {
  Eigen::VectorXd w;        ///< M angular frequencies on [0, pi/h]
  Eigen::VectorXd p;        ///< p(w_j)
  Eigen::VectorXd p_fejer;  ///< p_F(w_j)
  double w_max = 0;         ///< pi/h
  double integral = 0;      ///< 2 int_0^{w_max} p dw (trapezoid): ~1 when aliasing is negligible
  double negative_mass = 0;            ///< 2 int_0^{w_max} max(0, -p_F) dw (trapezoid)
  double negative_mass_untapered = 0;  ///< 2 int_0^{w_max} max(0, -p) dw: what sampling drops (truncation ripples)
  /// 8 N eps S, S = |Phi_0| + 2 sum_{k>=1} |Phi_k|: a bound on the bracket's rounding error (N-term sums of
  /// products with correctly reduced cosines, ~N eps S; the taper weights and a few ulps in each Phi_k, <= 4 N eps S),
  /// which bounds the computed negative mass of a positive-definite sequence (the weights (h/2pi) sinc^2 <= h/2pi
  /// integrate to at most 1/2 over [0, pi/h], doubled for the symmetric half).
  double tolerance = 0;
  bool positive_definite = true;  ///< negative_mass <= tolerance
};

/// Default M: 2(N-1)+1 (the bracket is a trigonometric polynomial of degree N-1 in wh; this samples it at twice
/// its zero spacing), at least 4097 and at most 65537.
std::int64_t default_density_points(std::int64_t n_lags);
/// The cosine terms estimate_density evaluates: N M (one table look-up and two multiply-adds each).
double density_work(std::int64_t n_lags, std::int64_t points);

/// Both transforms at M points (M >= 2) with one pass of N M cosine terms. Angles are reduced exactly: w_j k h =
/// pi (j k mod 2(M-1))/(M-1), so every cosine is a table entry cos(pi r/(M-1)) accurate to an ulp, at any N.
/// tolerance < 0: the rounding bound above; else the given tolerance. threads <= 0: all cores (the numbers do not
/// depend on it). @throws InputError (naming `where`) for a table that breaks KernelGrid's constraints or M < 2.
DensityEstimate estimate_density(const KernelGrid& t, std::int64_t points, double tolerance = -1, int threads = 0,
                                 std::string_view where = "ropekit::estimate_density");

/// How the D frequencies are drawn from |w|'s distribution.
enum class DesignSampling {
  quantile,    ///< deterministic: w_i = Q((i - 1/2)/D), i = 1..D
  iid,         ///< w_i = Q(U_i), U_i = Rng(seed, kStreamDesign).uniform() in order
  antithetic,  ///< (D+1)/2 draws U_j placed as (Q(U_j), Q(1 - U_j)) in (2j, 2j+1); an odd last one keeps Q(U_j)
};
/// "quantile", "iid", "antithetic". @throws InputError otherwise (as "<where>: --sampling = '<text>' (must be ...)").
DesignSampling parse_design_sampling(std::string_view text, std::string_view where = "ropekit");
std::string design_sampling_name(DesignSampling s);

/// The seed stream of DesignSampling::iid and antithetic draws.
constexpr std::uint64_t kStreamDesign = 0x44'45'53'49'47'4E;  // "DESIGN"

/// |w|'s distribution on a grid w_0 = 0 < ... < w_{M-1}: density 2 max(p, 0), CDF by the trapezoid rule,
/// normalised to 1 at w_{M-1} (mass beyond the grid is dropped), quantile by linear interpolation in a cell.
struct MagnitudeDistribution {
  Eigen::VectorXd w;    ///< the grid
  Eigen::VectorXd cdf;  ///< F(w_j), F(0) = 0, F(w_{M-1}) = 1
  double mass = 0;      ///< 2 int max(p, 0) dw before normalising
};
/// @throws InputError if the grid is not increasing from 0 or max(p, 0) has no mass.
MagnitudeDistribution magnitude_distribution(const Eigen::VectorXd& w, const Eigen::VectorXd& p);
/// Q(u) for u in (0, 1): the w where the piecewise-linear CDF reaches u (the first cell with F_{c+1} >= u).
/// Never 0 for u > 0 (F(0) = 0); raised to the smallest normal double if it would round to less.
double quantile(const MagnitudeDistribution& d, double u);

/// The D frequencies by `sampling` (seed unused for quantile).
Eigen::VectorXd design_frequencies(const MagnitudeDistribution& d, int blocks, DesignSampling sampling,
                                   std::uint64_t seed);

/// (1/D) sum_i cos(w_i x) at each lag x (the realised kernel of an isotropic-content RF-RoPE, RF-RoPE Thm 2).
Eigen::VectorXd realised_kernel(const Eigen::VectorXd& freqs, const Eigen::VectorXd& lags, int threads = 0);

/// Prop 4 for iid draws from a density with kernel Phi: Var[(1/D) sum cos(w_i x)] = (1/D)[(1 + Phi(2x))/2 - Phi(x)^2]
/// (NaN when phi2 is NaN).
double iid_design_variance(double phi, double phi2, int blocks);

/// Var of the antithetic design's realised kernel at each lag, from |w|'s distribution itself: with c(u) =
/// cos(Q(u) x), a pair contributes Var[c(U) + c(1 - U)], an odd last block Var[c(U)], so Var = (1/D^2)
/// [floor(D/2) Var[c(U) + c(1-U)] + (D mod 2) Var[c(U)]], the moments by the midpoint rule in u with
/// `nodes` nodes (u_r = (r + 1/2)/R, so 1 - u_r = u_{R-1-r}): accurate to about an R-node quantile rule's error.
Eigen::VectorXd antithetic_design_variance(const MagnitudeDistribution& d, const Eigen::VectorXd& lags, int blocks,
                                           int nodes = 8192, int threads = 0);

// ---- line spectra: rotary encodings, whose Bochner measure is a finite set of atoms ----------------------------

/// The exact spectral measure of a rotary encoding (spec encodings.md sections 1-2). G = (+)_i a^2 R(-theta_i Dp)
/// (+) I_{n-r} gives Phi = tr G / tr G(0) = sum_i m_i cos(theta_i Dp) + m_0 with m_i = 2 a^2 / T (one per rotary
/// block), m_0 = (n - r)/T (the identity dims: an atom at w = 0), T = tr G(0) = 2 a^2 F + n - r. Bochner's measure
/// is atomic, mass m_i at +-theta_i; every m_i >= 0 is the certificate of positive definiteness (nothing estimated).
struct LineSpectrum {
  Eigen::VectorXd w;     ///< atoms |theta_i| in ascending order (0 for the identity dims); size F, or F + 1
  Eigen::VectorXd mass;  ///< m_i >= 0, summing to 1 up to rounding (F + 1 terms)
  Eigen::VectorXd cdf;   ///< sum_{j <= i} m_j; the last exactly 1
};

/// The line spectrum of rope (any scaling scheme, partial, explicit freqs), rope-matched and 1-D rf-rope (its drawn
/// frequencies or the quantile grid), from tr G(0) block by block (encoding.hpp's blocks at lag 0; rope's a^2 is the
/// attention factor squared, rope-matched's and rf-rope's 1). Returns nullopt, with the reason in *why (if given),
/// for every other family, for frequencies that need a sequence length (dynamic NTK: frequencies() refuses), and for
/// a block that is not a plain rotation or identity. The identity Phi = sum m_i cos(w_i Dp) is the caller's to check
/// against kernel(e, lags) (line_kernel): it holds to rounding for these families.
std::optional<LineSpectrum> line_spectrum(const Encoding& e, std::string* why = nullptr);

/// sum_i m_i cos(w_i x) at each lag x (the summation order of the atoms).
Eigen::VectorXd line_kernel(const LineSpectrum& s, const Eigen::VectorXd& lags);

/// Tolerance of the line identity max_x |sum_i m_i cos(w_i x) - Phi(x)|: both are sums of the same F cosines with
/// weights equal to an ulp, so the rounding is <= ~F eps; the check passes at max(1e-12, 8 F eps) and refuses a
/// kernel that is not the line sum (a length-dependent scheme evaluated at each lag's own length).
double line_identity_tolerance(const LineSpectrum& s);

/// The discrete measure's inverse CDF: Q(u) = w_k, k the first atom with cdf_k >= u (u in (0, 1]); raised to the
/// smallest normal double as the table route's quantile (an atom at 0 becomes a frequency of 2.2e-308, which
/// `rope:freqs=[...]` accepts and whose cos is 1 at every lag below 1e300).
double quantile(const LineSpectrum& s, double u);

/// The D frequencies from the atoms by `sampling`, as the table route's design_frequencies: quantile u_i = (i - 1/2)/D
/// (with D a multiple of F equal-mass atoms, each atom D/F times), iid Q(U_i) (Rng(seed, kStreamDesign)), antithetic
/// Q(U), Q(1 - U).
Eigen::VectorXd design_frequencies(const LineSpectrum& s, int blocks, DesignSampling sampling, std::uint64_t seed);

/// Var of the antithetic design's realised kernel, exactly: c(u) = cos(Q(u) x) is constant on the cells of the
/// partition of (0, 1) by the cdf_k and 1 - cdf_k (at most 2F + 1 cells), so the moments of c(U) and c(U) + c(1 - U)
/// are finite sums; combined as antithetic_design_variance above.
Eigen::VectorXd antithetic_design_variance(const LineSpectrum& s, const Eigen::VectorXd& lags, int blocks,
                                           int threads = 0);

}  // namespace ropekit
