#pragma once
// The Matern correlation and the quantities of Prop 4 built on it, to ~1e-13 relative for every nu > 0 and lag
// (spec rf-rope.md section 2):
//   Phi = 2^{1-nu}/Gamma(nu) x^nu K_nu(x),   x = sqrt(2 nu) |Dp| / l,
// computed from its gamma-mixture form Phi = E[exp(-a/V)], V ~ Gamma(nu, rate nu), a = x^2/(4 nu) = |Dp|^2/(2 l^2)
// (the frequency is w = Z/(l sqrt V), so given V the phase u = Dp . w is N(0, 2a/V)). Each of Phi, 1 - Phi and
// Var[cos u] is one integral of a positive, log-concave integrand over t = log V: no cancellation against 1, and no
// K_nu or Gamma(nu) that leaves the float64 range.

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

}  // namespace ropekit
