#pragma once
// Gaussian (RBF) kernel (Rahimi & Recht 2007; spec rf-rope.md section 2): w ~ N(0, sigma^-2 I_k);
// Phi = exp(-|Dp|^2 / (2 sigma^2)).

#include "ropekit/spectral/family.hpp"

namespace ropekit::spectral {

struct Gaussian {
  double sigma = 1.0;  ///< finite, > 0
  int dims = 1;        ///< k, 1..kMaxDims
  static constexpr FamilyInfo info{"gaussian", "gaussian", "gaussian:sigma=<s>[,dims=k]", "w ~ N(0, sigma^-2 I_k)",
                                   "exp(-|Dp|^2 / (2 sigma^2))"};
  static constexpr std::array<FitKey, 1> fit_keys{{{"sigma"}}};
};

inline int dims(const Gaussian& g) { return g.dims; }
std::string spelling(const Gaussian& g);
void validate(const Gaussian& g, std::string_view where);
inline void check_sampling(const Gaussian&, std::string_view) {}
Gaussian parse_family(Spelling& sp, std::string_view where, const Gaussian*);
PhiPsiVar values_at(const Gaussian& g, std::span<const double> lag, bool with_var);
double kernel_work(const Gaussian& g);
void sample(const Gaussian& g, Rng& rng, std::size_t n, double* w);
QuantileFunction quantile_function(const Gaussian& g);
double pdf(const Gaussian& g, std::span<const double> w);
std::optional<ScaleParameter> scale_parameter(const Gaussian& g);
inline void set_scale(Gaussian& g, double v) { g.sigma = v; }
/// dPhi/dsigma = Phi x^2 / sigma^3 at the 1-D lag x.
std::optional<double> scale_derivative(const Gaussian& g, double x);
/// N(0, sigma^2) instead of N(0, sigma^-2): sigma -> 1/sigma.
Gaussian wrong_density(const Gaussian& g);
std::string wrong_density_note(const Gaussian& g);

}  // namespace ropekit::spectral
