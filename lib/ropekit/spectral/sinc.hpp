#pragma once
// Band-limited kernel (spec rf-rope.md section 2): each w_j ~ U(-W_j, W_j); Phi = prod_j sin(W_j Dp_j)/(W_j Dp_j)
// (1 at 0). k = W.size().

#include "ropekit/spectral/family.hpp"

namespace ropekit::spectral {

struct Sinc {
  std::vector<double> W{1.0};  ///< each finite, > 0
  static constexpr FamilyInfo info{"sinc", "sinc", "sinc:W=<W1>[,<W2>...][,dims=k]", "each w_j ~ U(-W_j, W_j)",
                                   "prod_j sin(W_j Dp_j)/(W_j Dp_j)"};
  static constexpr std::array<FitKey, 1> fit_keys{{{"W", 1e-300, 1e300, FitStart::bandwidth}}};
};

inline int dims(const Sinc& s) { return static_cast<int>(s.W.size()); }
std::string spelling(const Sinc& s);
void validate(const Sinc& s, std::string_view where);
inline void check_sampling(const Sinc&, std::string_view) {}
Sinc parse_family(Spelling& sp, std::string_view where, const Sinc*);
PhiPsiVar values_at(const Sinc& s, std::span<const double> lag, bool with_var);
double kernel_work(const Sinc& s);
void sample(const Sinc& s, Rng& rng, std::size_t n, double* w);
QuantileFunction quantile_function(const Sinc& s);
double pdf(const Sinc& s, std::span<const double> w);
std::optional<ScaleParameter> scale_parameter(const Sinc& s);
inline void set_scale(Sinc& s, double v) { s.W[0] = v; }
/// dPhi/dW = (cos(W x) - Phi)/W at the 1-D lag x (0 at x = 0).
std::optional<double> scale_derivative(const Sinc& s, double x);
/// U(-1/W, 1/W) instead of U(-W, W).
Sinc wrong_density(const Sinc& s);
std::string wrong_density_note(const Sinc& s);

}  // namespace ropekit::spectral
