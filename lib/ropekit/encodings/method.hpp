#pragma once
// Fixed relative-position bases ("methods") of the Jordan-RoPE paper's basis probes
// (Zhang, Jordan-RoPE, sections 5.2-5.5; spec fixed-basis.md section 2), as values.
//
// Notation (lag d >= 0, run parameters F, h, theta, gamma, L): x = d/L,
// that = x/(1+x) (bounded shear time) or x (raw), E = exp(-gamma d),
// C_k = cos(omega_k d), S_k = sin(omega_k d), omega_k = theta^(-2k/h), k = 0..F-1.
// A family's gamma or bounded_tau left empty takes the run's value.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ropekit {

namespace method {
struct Nope {};                                       ///< 1
struct Rope {};                                       ///< 1, C, S
struct RopeMatched { int k = 2; };                    ///< 1, C_0..C_{M-1}, S_0..S_{M-1}; M = max(1, F/k), k >= 1
struct Alibi {};                                      ///< 1, x
struct RopeAlibi {};                                  ///< 1, C, S, x
struct DampedRope { std::optional<double> gamma; };   ///< 1, E C, E S
struct RealJordan {                                   ///< 1, E, that E  (real order-2 Jordan block)
  std::optional<double> gamma;
  std::optional<bool> bounded_tau;
};
struct DirectSum {                                    ///< 1, C, S, x, E, that E
  std::optional<double> gamma;
  std::optional<bool> bounded_tau;
};
struct DirectSumPoly {                                ///< 1, C, S, that^1..that^(k-1); k >= 2
  int k = 4;
  std::optional<bool> bounded_tau;
};
/// Complex Jordan block of order m >= 1 (stabilized when bounded_tau, exact/raw otherwise):
/// 1, then for p = 0..m-1: (that^p/p!) E C, (that^p/p!) E S.
struct Jordan {
  int m = 2;
  std::optional<double> gamma;
  std::optional<bool> bounded_tau;
};
/// Scaled-exact Jordan block, gamma = c/L and eta = 1/L: an exact one-parameter representation.
/// 1, then for p = 0..m-1: (x^p/p!) e^{-c x} C, (x^p/p!) e^{-c x} S. Ignores the run's gamma, bounded_tau.
struct JordanScaled {
  int m = 3;       ///< 2..32 (the spec's m = max(2, k))
  double c = 1.0;  ///< finite, >= 0
};
}  // namespace method

using Method = std::variant<method::Nope, method::Rope, method::RopeMatched, method::Alibi, method::RopeAlibi,
                            method::DampedRope, method::RealJordan, method::DirectSum, method::DirectSumPoly,
                            method::Jordan, method::JordanScaled>;

/// Parses a reference name (`jordan_scaled_m4_c010`, spec section 2 rules 1-4) or a readable
/// spelling (`jordan-scaled:m=4,c=0.1`). Both read the same parameters: a reference suffix k means the
/// spec's max(min, k) (direct_sum_poly_m1 is k = 2), and a readable spelling must give a value the spec
/// allows itself (direct-sum-poly:k=1 is refused, naming k = 2). Orders are at most 32 (rope_matched: 2^31 - 1).
/// @throws InputError for an unknown name (listing the known ones), bad parameters, or a name the
///         reference silently misreads (`jordan_exact_m4_c010`), giving the explicit spelling. Messages start
///         with `what` and the name as written, e.g. "ropekit features: --method 'jordan:m=0': m = 0 (...)".
Method parse_method(std::string_view name, std::string_view what = "method");

/// The readable spelling that parses back to the same value, e.g. "jordan:m=2,tau=raw".
std::string spelling(const Method& m);

/// One line per family for `ropekit list methods`.
struct MethodFamilyInfo {
  std::string readable;        ///< e.g. "jordan-scaled:m=<m>,c=<c>"
  std::string reference_names; ///< e.g. "jordan_scaled_m<k>[_cNNN], jordan_exact[_cNNN], jordan_exact_scaled"
  std::string columns;         ///< e.g. "1, (x^p/p!) e^{-cx} C, (x^p/p!) e^{-cx} S  (p < m)"
  std::string count;           ///< e.g. "1+2mF"
};
const std::vector<MethodFamilyInfo>& method_families();

}  // namespace ropekit
