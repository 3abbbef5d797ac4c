#pragma once
// Cauchy kernel (spec rf-rope.md section 2): each w_j ~ Laplace(0, 1/b), density (b/2) e^{-b |w_j|};
// Phi = prod_j 1/(1 + (Dp_j/b)^2). Erratum (spec section 2): the paper's "equivalently p(w) proportional to
// e^{-|w|/b}" is Laplace(0, b), whose kernel is prod_j 1/(1 + b^2 Dp_j^2); Laplace(0, 1/b) is the right density.

#include "ropekit/spectral/family.hpp"

namespace ropekit::spectral {

struct Cauchy {
  double b = 1.0;  ///< finite, > 0
  int dims = 1;    ///< k, 1..kMaxDims
  static constexpr FamilyInfo info{"cauchy", "cauchy", "cauchy:b=<b>[,dims=k]",
                                   "each w_j ~ Laplace(0, 1/b), density (b/2) e^{-b|w|}", "prod_j 1/(1 + (Dp_j/b)^2)"};
  static constexpr std::array<FitKey, 1> fit_keys{{{"b"}}};
};

inline int dims(const Cauchy& c) { return c.dims; }
std::string spelling(const Cauchy& c);
void validate(const Cauchy& c, std::string_view where);
inline void check_sampling(const Cauchy&, std::string_view) {}
Cauchy parse_family(Spelling& sp, std::string_view where, const Cauchy*);
PhiPsiVar values_at(const Cauchy& c, std::span<const double> lag, bool with_var);
double kernel_work(const Cauchy& c);
void sample(const Cauchy& c, Rng& rng, std::size_t n, double* w);
QuantileFunction quantile_function(const Cauchy& c);
double pdf(const Cauchy& c, std::span<const double> w);
std::optional<ScaleParameter> scale_parameter(const Cauchy& c);
inline void set_scale(Cauchy& c, double v) { c.b = v; }
/// dPhi/db = 2 x^2 / b^3 Phi^2 at the 1-D lag x.
std::optional<double> scale_derivative(const Cauchy& c, double x);
/// Laplace(0, b), the erratum's density: b -> 1/b.
Cauchy wrong_density(const Cauchy& c);
std::string wrong_density_note(const Cauchy& c);

}  // namespace ropekit::spectral
