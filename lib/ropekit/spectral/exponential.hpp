#pragma once
// Laplacian (exponential) kernel, Matern-1/2 (spec rf-rope.md section 2): 1-D w ~ Cauchy(0, 1/l); k-D
// w = Z/(l |g|), Z ~ N(0, I_k), g ~ N(0, 1) (multivariate Cauchy = Student-t with 1 dof, scaled by 1/l);
// Phi = exp(-|Dp|/l).

#include "ropekit/spectral/family.hpp"

namespace ropekit::spectral {

struct Exponential {
  double l = 1.0;  ///< finite, > 0
  int dims = 1;    ///< k, 1..kMaxDims
  static constexpr FamilyInfo info{"exponential", "exponential", "exponential:l=<l>[,dims=k]",
                                   "1-D: Cauchy(0, 1/l); k-D: multivariate Cauchy (Student-t, 1 dof) / l",
                                   "exp(-|Dp|/l)"};
  static constexpr std::array<FitKey, 1> fit_keys{{{"l"}}};
};

inline int dims(const Exponential& e) { return e.dims; }
std::string spelling(const Exponential& e);
void validate(const Exponential& e, std::string_view where);
inline void check_sampling(const Exponential&, std::string_view) {}
Exponential parse_family(Spelling& sp, std::string_view where, const Exponential*);
PhiPsiVar values_at(const Exponential& e, std::span<const double> lag, bool with_var);
double kernel_work(const Exponential& e);
void sample(const Exponential& e, Rng& rng, std::size_t n, double* w);
QuantileFunction quantile_function(const Exponential& e);
double pdf(const Exponential& e, std::span<const double> w);
std::optional<ScaleParameter> scale_parameter(const Exponential& e);
inline void set_scale(Exponential& e, double v) { e.l = v; }
/// dPhi/dl = |x| / l^2 e^{-|x|/l} at the 1-D lag x.
std::optional<double> scale_derivative(const Exponential& e, double x);
/// Cauchy(0, l) instead of Cauchy(0, 1/l): l -> 1/l.
Exponential wrong_density(const Exponential& e);
std::string wrong_density_note(const Exponential& e);

}  // namespace ropekit::spectral
