#pragma once
// Spectral mixture (Wilson & Adams 2013; spec rf-rope.md section 2): component q (weight w_q, normalised to sum 1)
// is N(+mu_q, diag(s_q^2)) or N(-mu_q, diag(s_q^2)) with equal mass;
// Phi = sum_q w_q exp(-sum_j s_qj^2 Dp_j^2 / 2) cos(mu_q . Dp).

#include <Eigen/Dense>

#include "ropekit/spectral/family.hpp"

namespace ropekit::spectral {

struct Mixture {
  std::vector<double> weights;  ///< each finite, > 0
  Eigen::MatrixXd mu;           ///< rows = components, cols = k: mean frequencies, finite
  Eigen::MatrixXd s;            ///< rows = components, cols = k: frequency standard deviations, finite, >= 0
  static constexpr FamilyInfo info{"mixture", "mixture", "mixture:weights=<w..>,mu=<mu..>,s=<s..>[,dims=k]",
                                   "component q: N(+-mu_q, diag(s_q^2)), both signs, equal mass",
                                   "sum_q w_q exp(-sum_j s_qj^2 Dp_j^2/2) cos(mu_q . Dp)"};
  static constexpr std::array<FitKey, 0> fit_keys{};
};

inline int dims(const Mixture& m) { return static_cast<int>(m.mu.cols()); }
std::string spelling(const Mixture& m);
void validate(const Mixture& m, std::string_view where);
inline void check_sampling(const Mixture&, std::string_view) {}
Mixture parse_family(Spelling& sp, std::string_view where, const Mixture*);
PhiPsiVar values_at(const Mixture& m, std::span<const double> lag, bool with_var);
double kernel_work(const Mixture& m);
void sample(const Mixture& m, Rng& rng, std::size_t n, double* w);
QuantileFunction quantile_function(const Mixture& m);
/// @throws InputError for a component with a zero width (a point mass).
double pdf(const Mixture& m, std::span<const double> w);
inline std::optional<ScaleParameter> scale_parameter(const Mixture&) { return std::nullopt; }
inline void set_scale(Mixture&, double) {}
inline std::optional<double> scale_derivative(const Mixture&, double) { return std::nullopt; }
/// The mixture without its means (mu = 0).
Mixture wrong_density(const Mixture& m);
inline std::string wrong_density_note(const Mixture&) { return "the mixture without its means (mu = 0)"; }

}  // namespace ropekit::spectral
