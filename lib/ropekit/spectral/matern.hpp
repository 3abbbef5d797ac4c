#pragma once
// The Matern correlation and the quantities of Prop 4 built on it, to ~1e-13 relative for every nu > 0 and lag
// (spec rf-rope.md section 2):
//   Phi = 2^{1-nu}/Gamma(nu) x^nu K_nu(x),   x = sqrt(2 nu) |Dp| / l,
// computed from its gamma-mixture form Phi = E[exp(-a/V)], V ~ Gamma(nu, rate nu), a = x^2/(4 nu) = |Dp|^2/(2 l^2)
// (the frequency is w = Z/(l sqrt V), so given V the phase u = Dp . w is N(0, 2a/V)). Each of Phi, 1 - Phi and
// Var[cos u] is one integral of a positive, log-concave integrand over t = log V: no cancellation against 1, and no
// K_nu or Gamma(nu) that leaves the float64 range. Below, the Matern spectral density itself (spectral::Matern)
// with the family functions every density has (family.hpp).

#include "ropekit/spectral/family.hpp"

namespace ropekit {

struct MaternValues {
  double phi = 1;      ///< Phi
  double psi = 0;      ///< 1 - Phi, accurate relative to itself
  double var_cos = 0;  ///< Var[cos u] = (1 + Phi(2 Dp))/2 - Phi^2, accurate relative to itself (NaN if not asked)
};

/// Above this nu the kernel is the Gaussian exp(-a): the relative difference, about (a^2 + 2a)/(2 nu), is below
/// 3e-15 wherever Phi is a normal double (a < 745).
constexpr double kMaternGaussianNu = 1e20;

/// Phi, 1 - Phi and (if with_var_cos) Var[cos u] at a = |Dp|^2/(2 l^2) >= 0. nu = 1/2, 3/2, 5/2 use the
/// elementary forms (Phi = P(x) e^{-x}) unless force_general; nu > kMaternGaussianNu the Gaussian limit.
MaternValues matern_values(double nu, double a, bool with_var_cos = true, bool force_general = false);
/// The same from log a (-inf for a = 0), for a below the float64 range: at small nu 1 - Phi ~ a^nu is not negligible
/// there (nu = 0.05, |Dp|/l = 1e-170: 8e-18).
MaternValues matern_values_log(double nu, double log_a, bool with_var_cos = true, bool force_general = false);

/// Phi as a function of x = sqrt(2 nu) |Dp| / l >= 0 (1 at 0, 0 at infinity).
double matern_correlation(double nu, double x, bool force_general = false);
/// 1 - Phi at x, without cancellation for small x.
double matern_one_minus(double nu, double x, bool force_general = false);
/// Var[cos u] at x.
double matern_var_cos(double nu, double x, bool force_general = false);

namespace spectral {

/// Matern(nu, l): w = Z/(l sqrt(V)), Z ~ N(0, I_k), V ~ Gamma(shape nu, rate nu) (Student-t with 2 nu dof,
/// scaled by 1/l); Phi = 2^{1-nu}/Gamma(nu) x^nu K_nu(x), x = sqrt(2 nu) |Dp|/l. nu = 1/2 is the exponential.
struct Matern {
  double nu = 1.5;  ///< finite, > 0 (sampling needs nu >= kMinSampledNu)
  double l = 1.0;   ///< finite, > 0
  int dims = 1;     ///< k, 1..kMaxDims
  static constexpr FamilyInfo info{"matern", "matern", "matern:nu=<nu>,l=<l>[,dims=k]",
                                   "Z/(l sqrt(V)), Z ~ N(0, I_k), V ~ Gamma(nu, rate nu) (Student-t, 2 nu dof)",
                                   "2^{1-nu}/Gamma(nu) x^nu K_nu(x), x = sqrt(2 nu)|Dp|/l"};
  static constexpr std::array<FitKey, 2> fit_keys{{{"nu", 1e-3, 1e6, FitStart::shape}, {"l"}}};
};

inline int dims(const Matern& m) { return m.dims; }
std::string spelling(const Matern& m);
void validate(const Matern& m, std::string_view where);
/// @throws InputError for nu < kMinSampledNu.
void check_sampling(const Matern& m, std::string_view where);
Matern parse_family(Spelling& sp, std::string_view where, const Matern*);
PhiPsiVar values_at(const Matern& m, std::span<const double> lag, bool with_var);
double kernel_work(const Matern& m);
void sample(const Matern& m, Rng& rng, std::size_t n, double* w);
QuantileFunction quantile_function(const Matern& m);
double pdf(const Matern& m, std::span<const double> w);
std::optional<ScaleParameter> scale_parameter(const Matern& m);
inline void set_scale(Matern& m, double v) { m.l = v; }
/// None: Phi has no convenient closed-form derivative (fit-params differentiates numerically).
inline std::optional<double> scale_derivative(const Matern&, double) { return std::nullopt; }
/// Student-t(2 nu) times l instead of divided by l: l -> 1/l.
Matern wrong_density(const Matern& m);
std::string wrong_density_note(const Matern& m);

}  // namespace spectral

}  // namespace ropekit
