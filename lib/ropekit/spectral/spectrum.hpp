#pragma once
// Spectral densities p(w) on R^k as values, each with its induced kernel in closed form (Bochner pairs):
//   Phi(Dp) = E_{w~p}[cos(Dp . w)]        (RF-RoPE paper eq. (Phi-def); spec rf-rope.md sections 1-2)
// and Phi2(Dp) = Phi(2 Dp), the per-frequency variances of Prop 4, Var[cos u] = (1 + Phi2)/2 - Phi^2 and
// Var[sin u] = (1 - Phi2)/2 (u = Dp . w), sampling, 1-D quantiles (stratified sampling) and densities.
// Families are parameterised by the kernel's own scale (sigma, b, l) or bandwidth (W), as in the spec.

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"

namespace ropekit {

namespace spectral {
/// Gaussian (RBF) kernel: w ~ N(0, sigma^-2 I_k); Phi = exp(-|Dp|^2 / (2 sigma^2)).
struct Gaussian {
  double sigma = 1.0;  ///< finite, > 0
  int dims = 1;        ///< k, 1..kMaxDims
};
/// Cauchy kernel: each w_j ~ Laplace(0, 1/b), density (b/2) e^{-b |w_j|}; Phi = prod_j 1/(1 + (Dp_j/b)^2).
/// Erratum (spec section 2): the paper's "equivalently p(w) proportional to e^{-|w|/b}" is Laplace(0, b),
/// whose kernel is prod_j 1/(1 + b^2 Dp_j^2); Laplace(0, 1/b) is the right density.
struct Cauchy {
  double b = 1.0;  ///< finite, > 0
  int dims = 1;
};
/// Laplacian (exponential) kernel, Matern-1/2: 1-D w ~ Cauchy(0, 1/l); k-D w = Z/(l |g|), Z ~ N(0, I_k),
/// g ~ N(0, 1) (multivariate Cauchy = Student-t with 1 dof, scaled by 1/l); Phi = exp(-|Dp|/l).
struct Exponential {
  double l = 1.0;  ///< finite, > 0
  int dims = 1;
};
/// Band-limited kernel: each w_j ~ U(-W_j, W_j); Phi = prod_j sin(W_j Dp_j)/(W_j Dp_j) (1 at 0). k = W.size().
struct Sinc {
  std::vector<double> W{1.0};  ///< each finite, > 0
};
/// Matern(nu, l): w = Z/(l sqrt(V)), Z ~ N(0, I_k), V ~ Gamma(shape nu, rate nu) (Student-t with 2 nu dof,
/// scaled by 1/l); Phi = 2^{1-nu}/Gamma(nu) x^nu K_nu(x), x = sqrt(2 nu) |Dp|/l. nu = 1/2 is the exponential.
struct Matern {
  double nu = 1.5;  ///< finite, > 0 (sampling needs nu >= kMinSampledNu)
  double l = 1.0;   ///< finite, > 0
  int dims = 1;
};
/// Spectral mixture: component q (weight w_q, normalised to sum 1) is N(+mu_q, diag(s_q^2)) or
/// N(-mu_q, diag(s_q^2)) with equal mass; Phi = sum_q w_q exp(-sum_j s_qj^2 Dp_j^2 / 2) cos(mu_q . Dp).
struct Mixture {
  std::vector<double> weights;  ///< each finite, > 0
  Eigen::MatrixXd mu;           ///< rows = components, cols = k: mean frequencies, finite
  Eigen::MatrixXd s;            ///< rows = components, cols = k: frequency standard deviations, finite, >= 0
};
/// Frequencies read from a file: each listed vector w_j is drawn with probability 1/n and a random sign
/// (so p is centrally symmetric, as Lemma 1 needs); Phi = (1/n) sum_j cos(Dp . w_j).
struct Empirical {
  Eigen::MatrixXd w;   ///< rows = frequencies (n >= 1), cols = k: finite
  std::string source;  ///< the file it came from, for messages and spellings
};
}  // namespace spectral

using Spectrum = std::variant<spectral::Gaussian, spectral::Cauchy, spectral::Exponential, spectral::Sinc,
                              spectral::Matern, spectral::Mixture, spectral::Empirical>;

constexpr int kMaxDims = 1024;
/// Below this nu a Matern frequency overflows float64 with non-negligible probability (w ~ U^(-1/(2 nu))).
constexpr double kMinSampledNu = 0.05;

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

/// Frequency-file text: one frequency vector per line, components separated by commas, spaces or tabs;
/// blank lines and lines starting with '#' are skipped. @throws InputError (naming `source` and the line)
/// if there are no rows, rows of different lengths, a non-numeric or non-finite value, or more than kMaxDims columns.
spectral::Empirical parse_frequency_text(std::string_view text, std::string_view source);
/// Reads and parses a frequency file. @throws InputError if unreadable or malformed.
spectral::Empirical read_frequency_file(const std::string& path);

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
using QuantileFunction = std::function<double(double)>;
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

}  // namespace ropekit
