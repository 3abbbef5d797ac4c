#pragma once
// What every spectral density provides (RF-RoPE paper eq. (Phi-def); spec rf-rope.md sections 1-2), and the
// helpers the families share. A family is a struct in namespace ropekit::spectral with, in its own file pair:
//   static constexpr FamilyInfo info;             name, spelling, frequencies and kernel lines, keys
//   static constexpr std::array<FitKey, N> fit_keys   the keys fit-params may free (none: not fitted)
//   dims, spelling, validate, check_samplable, parse_family (from a Spelling)
//   values_at (Phi, 1 - Phi, Var[cos u] at one lag), kernel_work, sample, make_quantile, density
//   scale_parameter (the 1-D scale key, if any), set_scale, scale_derivative (dPhi/dscale in closed form, if any)
//   wrong_density and wrong_density_note (the mislabelled density rf_verify's power check draws)
// SpectralFamily checks all of it, so a family that forgets one does not compile.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

constexpr int kMaxDims = 1024;
/// Below this nu a Matern frequency overflows float64 with non-negligible probability (w ~ U^(-1/(2 nu))).
constexpr double kMinSampledNu = 0.05;

/// The 1-D quantile as a function object that keeps its set-up (sorted file frequencies, Boost distributions).
using QuantileFunction = std::function<double(double)>;

namespace spectral {

/// A family's lines for `ropekit kernel --families` and its messages.
struct FamilyInfo {
  std::string_view name;         ///< "gaussian" (the file family: "file")
  std::string_view known;        ///< as "unknown spectrum" lists it: "gaussian", "file:PATH"
  std::string_view spelling;     ///< e.g. "gaussian:sigma=<s>[,dims=k]"
  std::string_view frequencies;  ///< e.g. "w ~ N(0, sigma^-2 I_k)"
  std::string_view kernel;       ///< e.g. "exp(-|Dp|^2 / (2 sigma^2))"
  bool keyed = true;             ///< spelled family:key=value (false: the file family, file:PATH read whole)
};

/// How fit-params starts a free key: the shape 1.5, the data's scale guess g (the first lag where Phi < 1/2),
/// or the bandwidth 1.9 / g.
enum class FitStart { shape, scale, bandwidth };
/// A key fit-params may free, with the bounds it keeps the key in.
struct FitKey {
  std::string_view name;
  double lo = 1e-300, hi = 1e300;
  FitStart start = FitStart::scale;
};

/// The scale key of a 1-D density and whether frequencies scale as 1/s (kernel scales) or s (bandwidth).
struct ScaleParameter {
  std::string name;
  double value = 0;
  bool inverse = true;
};

/// Phi, 1 - Phi and Var[cos u] at one lag (var_cos only if asked; NaN otherwise).
struct PhiPsiVar {
  double phi, psi, var_cos;
};

// ---- helpers the families share (family.cpp) ------------------------------------------------------------------

/// Scales (sigma, b, l, W) and frequencies (mixture mu and s, file rows) stay within 1e-300..1e300 in magnitude,
/// so that sampled frequencies, their reciprocals (the power check's density) and doubled values stay in float64.
constexpr double kMaxMagnitude = 1e300;
/// Samplers work in stack-held pieces: no allocation per call.
constexpr std::size_t kPiece = 256;

void check_scale(std::string_view where, std::string_view name, double v);
void check_frequency(std::string_view where, std::string_view name, double v);
void check_dims(std::string_view where, std::int64_t k);
/// The optional dims=k key of a spelling (1 if absent), checked.
int take_dims(Spelling& sp, std::string_view where);
/// |x| without overflow for any finite components.
double norm(std::span<const double> x);
/// 1 - prod_j (1 - psi_j), accurate when every psi_j is small (all factors near 1).
double one_minus_product(const std::vector<double>& psi);
/// 1 - sin(x)/x, accurate near 0.
double one_minus_sinc(double x);
/// w / sum(w).
std::vector<double> normalised(const std::vector<double>& w);
/// "1,2,3".
std::string join(const std::vector<double>& v);
/// "<text>,dims=k" unless k = 1.
std::string with_dims(std::string text, int k);
/// @throws InputError "spectrum '<spelling>': lag = <lag> (must be small enough that the phase <what> is finite".
[[noreturn]] void overflowing_phase(const std::string& spelling, std::span<const double> lag, std::string_view what);

/// Moments of one independent, symmetric component u_j of the phase of a product kernel (Cauchy, sinc):
/// c = E cos u_j, v = Var cos u_j, s = E sin^2 u_j = (1 - Phi2_j)/2. For u = u_1 + u_2, E[cos u_j sin u_j] = 0
/// gives Var cos u = v1 v2 + v1 c2^2 + c1^2 v2 + s1 s2 and E sin^2 u = s1 (v2 + c2^2) + (v1 + c1^2) s2: sums of
/// non-negative terms, so the variance keeps its relative accuracy at small lags, where it is O(Dp^4).
struct CosMoments {
  double c = 1, v = 0, s = 0;
};
CosMoments compose(const CosMoments& x, const CosMoments& y);

template <class F>
concept SpectralFamily = std::default_initializable<F> &&
    requires(const F& f, F& m, Spelling& sp, std::string_view where, std::span<const double> x, Rng& rng, double* w) {
  { F::info } -> std::convertible_to<FamilyInfo>;
  { F::fit_keys.size() } -> std::convertible_to<std::size_t>;
  { dims(f) } -> std::same_as<int>;
  { spelling(f) } -> std::same_as<std::string>;
  { validate(f, where) };
  { check_sampling(f, where) };
  { parse_family(sp, where, static_cast<const F*>(nullptr)) } -> std::same_as<F>;
  { values_at(f, x, true) } -> std::same_as<PhiPsiVar>;
  { kernel_work(f) } -> std::same_as<double>;
  { sample(f, rng, std::size_t{1}, w) };
  { quantile_function(f) } -> std::same_as<QuantileFunction>;
  { pdf(f, x) } -> std::same_as<double>;
  { scale_parameter(f) } -> std::same_as<std::optional<ScaleParameter>>;
  { set_scale(m, 1.0) };
  { scale_derivative(f, 1.0) } -> std::same_as<std::optional<double>>;
  { wrong_density(f) } -> std::same_as<F>;
  { wrong_density_note(f) } -> std::same_as<std::string>;
};

}  // namespace spectral
}  // namespace ropekit
