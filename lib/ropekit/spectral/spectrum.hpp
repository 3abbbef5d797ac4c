#pragma once
// Spectral densities p(w) on R^k as values, each with its induced kernel in closed form (Bochner pairs):
//   Phi(Dp) = E_{w~p}[cos(Dp . w)]        (RF-RoPE paper eq. (Phi-def); spec rf-rope.md sections 1-2)
// and Phi2(Dp) = Phi(2 Dp), the per-frequency variances of Prop 4, Var[cos u] = (1 + Phi2)/2 - Phi^2 and
// Var[sin u] = (1 - Phi2)/2 (u = Dp . w), sampling, 1-D quantiles (stratified sampling) and densities.
// Families are parameterised by the kernel's own scale (sigma, b, l) or bandwidth (W), as in the spec.
// Each family is one file pair, spectral/<family>.{hpp,cpp} (the contract: family.hpp); this header is the closed
// set of them and the functions that dispatch over it. Adding a family: its file pair and its line in the variant.

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/spectral/cauchy.hpp"
#include "ropekit/spectral/empirical.hpp"
#include "ropekit/spectral/exponential.hpp"
#include "ropekit/spectral/family.hpp"
#include "ropekit/spectral/gaussian.hpp"
#include "ropekit/spectral/matern.hpp"
#include "ropekit/spectral/mixture.hpp"
#include "ropekit/spectral/sinc.hpp"

namespace ropekit {

using Spectrum = std::variant<spectral::Gaussian, spectral::Cauchy, spectral::Exponential, spectral::Sinc,
                              spectral::Matern, spectral::Mixture, spectral::Empirical>;

namespace spectral {
template <class V>
inline constexpr bool kAllFamilies = false;
template <class... F>
inline constexpr bool kAllFamilies<std::variant<F...>> = (SpectralFamily<F> && ...);
static_assert(kAllFamilies<Spectrum>, "every alternative of Spectrum must model spectral::SpectralFamily (family.hpp)");
}  // namespace spectral

/// Parses `gaussian:sigma=1`, `cauchy:b=2`, `exponential:l=3`, `sinc:W=1,2`, `matern:nu=1.5,l=2`,
/// `mixture:weights=0.7,0.3,mu=0,2,s=0.5,0.1`, each with an optional `dims=k` (sinc: one W, or one per
/// dimension; mixture: mu has one row of k values per component, s one value per component or k), and
/// `file:PATH` (or `file:path=PATH`) for a frequency file (see parse_frequency_text). Omitted scales are 1,
/// nu is 1.5. @throws InputError for an unknown family (listing the known ones) or a bad parameter.
Spectrum parse_spectrum(std::string_view text);

/// Lags beyond this have 2 Dp (Phi2's argument, Prop 4) outside float64.
constexpr double kMaxRfLag = 0x1p1022;
/// @throws InputError "<where>: lags = <v> (must be at most 2^1022 in magnitude<for_what>: Phi2 is evaluated at
/// 2 Dp)" for the first lag component beyond kMaxRfLag (for_what: e.g. " for rf-rope").
void check_rf_lag_range(const Where& where, std::span<const double> lags, std::string_view for_what = "");

/// The spelling that parses back to the same value, e.g. "matern:nu=2.5,l=1,dims=2".
std::string spelling(const Spectrum& s);

/// Family name: "gaussian", "cauchy", "exponential", "sinc", "matern", "mixture", "file".
std::string family_name(const Spectrum& s);

/// @throws InputError "<where>: <name> = <value> (must be <constraint>)" for the first broken constraint.
void validate(const Spectrum& s, std::string_view where = "ropekit::Spectrum");

/// Also checks what sampling needs (Matern nu >= kMinSampledNu). @throws InputError.
void check_samplable(const Spectrum& s, std::string_view where = "ropekit::Spectrum");

/// k, the dimension of positions and frequencies.
int dims(const Spectrum& s);

/// Everything Prop 4 needs at one lag, each accurate relative to itself down to tiny lags: psi = 1 - Phi is
/// evaluated directly (expm1, series, Matern's mixture integral), and Var[cos u] = (1 + Phi2)/2 - Phi^2, which is
/// O(Dp^4) for kernels smooth at 0, from a per-family form without cancellation (closed forms; for product kernels
/// a composition of per-axis moments; for mixtures the law of total variance); Var[sin u] = (1 - Phi2)/2 = psi2/2.
struct KernelValues {
  double phi = 1;       ///< Phi(Dp)
  double phi2 = 1;      ///< Phi2(Dp) = Phi(2 Dp)
  double psi = 0;       ///< 1 - Phi(Dp)
  double psi2 = 0;      ///< 1 - Phi(2 Dp)
  double var_cos = 0;   ///< Var[cos(Dp . w)]
  double var_sin = 0;   ///< Var[sin(Dp . w)]
};

/// Elementary evaluations (exp, log, sin, ...) that kernel_values makes per lag, for run-time estimates: a few
/// per dimension for closed forms, per component or file row for mixtures and file spectra, and about 2000 for the
/// general Matern (up to five quadratures of about 400 evaluations each).
double kernel_values_work(const Spectrum& s);

/// Phi(Dp); lag.size() must equal dims(s). @throws InputError on a size mismatch or a non-finite lag.
double phi(const Spectrum& s, std::span<const double> lag);
/// 1 - Phi(Dp), accurate relative to itself near Dp = 0.
double one_minus_phi(const Spectrum& s, std::span<const double> lag);
/// Phi, Phi2, 1 - Phi, 1 - Phi2, Var[cos u], Var[sin u] at one lag.
KernelValues kernel_values(const Spectrum& s, std::span<const double> lag);

/// Fills w with n independent draws: structure of arrays, component j of draw i at w[j * n + i].
/// Vectorised inverse transforms / Box-Muller where the family allows. Call check_samplable first.
void sample(const Spectrum& s, Rng& rng, std::size_t n, double* w);

/// True for k = 1 (every 1-D family has a quantile function, so stratified sampling works).
bool has_quantile(const Spectrum& s);
/// The quantile of the 1-D density at u in (0, 1). @throws InputError if dims(s) != 1.
double quantile(const Spectrum& s, double u);
/// The same as a function object that keeps its set-up (sorted file frequencies, Boost distributions).
QuantileFunction make_quantile(const Spectrum& s);

/// The density p(w) (w.size() == k) for the continuous families. @throws InputError for a file spectrum or a
/// mixture with a zero width (point masses).
double density(const Spectrum& s, std::span<const double> w);

/// One line per family for `ropekit kernel --families`.
struct SpectrumFamilyInfo {
  std::string spelling;     ///< e.g. "gaussian:sigma=<s>[,dims=k]"
  std::string frequencies;  ///< e.g. "w ~ N(0, sigma^-2 I_k)"
  std::string kernel;       ///< e.g. "exp(-|Dp|^2/(2 sigma^2))"
};
const std::vector<SpectrumFamilyInfo>& spectrum_families();

/// The 1-D scale key of s (sigma, b, l, or the bandwidth W), none for k > 1, mixtures and files.
std::optional<spectral::ScaleParameter> spectrum_scale(const Spectrum& s);
/// s with its scale key set to v (unchanged where it has none).
Spectrum spectrum_with_scale(Spectrum s, double v);
/// dPhi/d(scale) at the 1-D lag x in closed form, none where the family has no closed form (Matern) or no scale.
std::optional<double> spectrum_scale_derivative(const Spectrum& s, double x);
/// The keys fit-params may free (empty: the family is not fitted).
std::span<const spectral::FitKey> fit_keys(const Spectrum& s);
/// The family named `name` with default parameters, for families spelled family:key=value (none otherwise).
std::optional<Spectrum> default_spectrum(std::string_view name);
/// The names of the families with fit keys, in variant order: "gaussian, cauchy, exponential, sinc, matern".
std::string fitted_family_names();

}  // namespace ropekit
