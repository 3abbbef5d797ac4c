#include "ropekit/lie/encoder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <mutex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/core/enum_text.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/keep_max.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/lie/lie_detail.hpp"

namespace ropekit {

using namespace lie_detail;

Route parse_route_option(const std::string& command, const std::string& text) {
  if (text == "auto") return Route::automatic;
  if (text == "closed-form") return Route::closed_form;
  if (text == "matrix-exp") return Route::matrix_exp;
  throw_bad_value(command, "--route", "'" + text + "'", "auto, closed-form or matrix-exp");
}

std::optional<Eigen::MatrixXd> detect_torus(const std::vector<Eigen::MatrixXd>& T) {
  if (T.empty()) return std::nullopt;
  const Eigen::Index n = T.front().rows();
  if (n < 2 || n % 2 != 0) return std::nullopt;
  Eigen::MatrixXd W(static_cast<Eigen::Index>(T.size()), n / 2);
  for (std::size_t i = 0; i < T.size(); ++i) {
    const auto& t = T[i];
    if (t.rows() != n || t.cols() != n) return std::nullopt;
    for (Eigen::Index c = 0; c < n; ++c)
      for (Eigen::Index r = 0; r < n; ++r)
        if (r / 2 != c / 2 && t(r, c) != 0.0) return std::nullopt;
    for (Eigen::Index b = 0; b < n / 2; ++b) {
      const double w = t(2 * b + 1, 2 * b);
      if (t(2 * b, 2 * b) != 0.0 || t(2 * b + 1, 2 * b + 1) != 0.0 || t(2 * b, 2 * b + 1) != -w) return std::nullopt;
      W(static_cast<Eigen::Index>(i), b) = w;
    }
  }
  return W;
}


Encoder::Encoder(const GeneratorSet& set) {
  set.validate();
  dim_ = set.dim;
  acting_ = set.acting();
  mixing_ = set.mixing;
  if (!mixing_ || orthogonality_defect(*mixing_) <= orthogonality_tolerance(dim_)) frequencies_ = detect_torus(set.base);
}

Route Encoder::resolve(Route route, const Where& where) const {
  if (route == Route::automatic) return has_closed_form() ? Route::closed_form : Route::matrix_exp;
  if (route == Route::closed_form && !has_closed_form())
    throw_bad_value(where, "route", "closed-form",
                    "available only for generators on the maximal torus with an orthogonal Q or none");
  return route;
}

Eigen::MatrixXd Encoder::operator()(const Eigen::VectorXd& x, Route route) const {
  if (x.size() != axes())
    throw_bad_value("generator encoder", "position size", std::to_string(x.size()), fmt::format("{}, the axes", axes()));
  if (resolve(route) == Route::matrix_exp) return hat(acting_, x).exp();
  const Eigen::VectorXd phase = frequencies_->transpose() * x;  // w_b . x, one per plane
  Eigen::MatrixXd E = Eigen::MatrixXd::Zero(dim_, dim_);
  for (Eigen::Index b = 0; b < phase.size(); ++b) {
    const double c = std::cos(phase[b]), s = std::sin(phase[b]);
    E.block<2, 2>(2 * b, 2 * b) << c, -s, s, c;
  }
  if (!mixing_) return E;
  return *mixing_ * E * mixing_->transpose();
}

double Encoder::kernel(const Eigen::VectorXd& dx, Route route) const {
  if (dx.size() != axes())
    throw_bad_value("generator encoder", "offset size", std::to_string(dx.size()), fmt::format("{}, the axes", axes()));
  if (resolve(route) == Route::matrix_exp) return (*this)(dx, Route::matrix_exp).trace() / dim_;
  const Eigen::VectorXd phase = frequencies_->transpose() * dx;
  return 2.0 * phase.array().cos().sum() / dim_;
}

double max_position_scale(int n) { return 1.0 / (16.0 * std::sqrt(static_cast<double>(n)) * kEps); }

namespace lie_detail {

// Q's products (Q^T Q, Q T Q^T) and det Q must stay finite: |Q|_F below 1e154 (|Q^T Q|_F <= |Q|_F^2) and
// Hadamard's bound prod_j |Q e_j|_2 >= |det Q| below 1e300. An orthogonal Q has sqrt(n) and 1.
void check_mixing_range(const GeneratorSet& set, const std::string& where) {
  if (!set.mixing) return;
  const Eigen::MatrixXd& Q = *set.mixing;
  const double f = Q.stableNorm();
  if (!(f <= 1e154))
    throw_bad_value(where, "Q", fmt::format("a matrix with |Q|_F = {}", format_number(f)),
                    "orthogonal (|Q|_F = sqrt(n)); at least |Q|_F <= 1e154, so that Q^T Q stays finite");
  double log10_hadamard = 0;
  for (Eigen::Index j = 0; j < Q.cols(); ++j) log10_hadamard += std::log10(Q.col(j).stableNorm());
  if (!(log10_hadamard <= 300))
    throw_bad_value(where, "Q", fmt::format("a matrix with prod_j |Q e_j|_2 = 10^{:.0f}", log10_hadamard),
                    "orthogonal (the product is 1); at least <= 1e300, Hadamard's bound on |det Q|, so that det Q "
                    "stays finite");
}

// |B_i|_2 of the acting generators, +inf if B_i is not finite; by SVD, or when `cheap` and on the torus by
// the largest |w_ib| (equal up to Q's rounding).
std::vector<double> spectral_norms(const Encoder& enc, bool cheap) {
  std::vector<double> out;
  for (int i = 0; i < enc.axes(); ++i) {
    const Eigen::MatrixXd& b = enc.acting()[static_cast<std::size_t>(i)];
    if (!b.allFinite()) out.push_back(std::numeric_limits<double>::infinity());
    else if (cheap && enc.has_closed_form()) out.push_back(enc.frequencies()->row(i).cwiseAbs().maxCoeff());
    else out.push_back(spectral_norm(b));
  }
  return out;
}

}  // namespace lie_detail

Cost induced_kernel_cost(const GeneratorSet& set, double rows, double max_offset, Route route) {
  const double n = set.dim, N = set.axes();
  const bool torus = detect_torus(set.base).has_value() &&
                     (!set.mixing || orthogonality_defect(*set.mixing) <= orthogonality_tolerance(set.dim));
  if (torus && route != Route::matrix_exp) return Cost{8 * rows * N, rows * N * n / 2 * 10 / kFlopsPerSecond};
  double f = 0;
  for (const auto& t : set.base) f += t.stableNorm();
  if (set.mixing) f *= std::max(1.0, set.mixing->stableNorm() * set.mixing->stableNorm() / n);
  const double squarings = std::max(0.0, std::ceil(std::log2(std::max(1.0, max_offset * f / 5.4))));
  return Cost{8 * (rows * N + 6 * n * n * (N + 2)), rows * 2 * n * n * n * (10 + std::min(squarings, 2000.0)) / kFlopsPerSecond};
}

namespace lie_detail {

// sum_i |x_i| |B_i|_2 <= max_position_scale(n) for every row x of `positions`; the first row that breaks it, or -1.
// Tries the cheap bound |B_i|_2 <= |B_i|_F first; the exact norms (SVD, or the torus frequencies) only if needed.
ScaleCheck find_unresolvable(const Encoder& enc, const Eigen::MatrixXd& positions) {
  const double limit = max_position_scale(enc.dim());
  auto first_bad = [&](const std::vector<double>& norm) {
    ScaleCheck r;
    r.largest_norm = norm.empty() ? 0 : *std::max_element(norm.begin(), norm.end());
    for (Eigen::Index k = 0; k < positions.rows(); ++k) {
      double scale = 0;
      for (int i = 0; i < enc.axes(); ++i)
        if (positions(k, i) != 0) scale += std::fabs(positions(k, i)) * norm[static_cast<std::size_t>(i)];
      if (!(scale <= limit)) return r.row = k, r.scale = scale, r;
    }
    return r;
  };
  std::vector<double> frobenius;
  for (const auto& b : enc.acting()) frobenius.push_back(b.allFinite() ? b.stableNorm() : HUGE_VAL);
  if (first_bad(frobenius).row < 0) return {};
  return first_bad(spectral_norms(enc, true));
}

}  // namespace lie_detail

void check_offsets(const GeneratorSet& set, const Eigen::MatrixXd& offsets, Route route, const Where& where) {
  set.validate();
  check_mixing_range(set, where.context);
  const Encoder enc(set);
  enc.resolve(route, where);
  if (offsets.cols() != enc.axes())
    throw_bad_value("induced kernel", "offset columns", std::to_string(offsets.cols()),
                    fmt::format("{}, the axes", enc.axes()));
  const ScaleCheck bad = find_unresolvable(enc, offsets);
  if (bad.row < 0) return;
  std::string text;
  for (int i = 0; i < enc.axes(); ++i) text += (i ? "," : "") + format_number(offsets(bad.row, i));
  throw_bad_value(where, "offsets", text,
                  fmt::format("such that sum_i |dx_i| |B_i|_2 <= 1/(16 sqrt(n) eps) = {:.3g} (here {:.3g}, |B_i|_2 up to "
                              "{:.3g}): beyond it rounding of the phases is no longer small against the resolution of "
                              "Phi = tr R / n",
                              max_position_scale(enc.dim()), bad.scale, bad.largest_norm));
}

Eigen::VectorXd induced_kernel(const GeneratorSet& set, const Eigen::MatrixXd& offsets, Route route,
                               const Where& where) {
  check_offsets(set, offsets, route, where);
  const Encoder enc(set);
  Eigen::VectorXd phi(offsets.rows());
  for (Eigen::Index k = 0; k < offsets.rows(); ++k) {
    phi[k] = enc.kernel(offsets.row(k).transpose(), route);
    if (!std::isfinite(phi[k])) {  // a non-skew set can grow like e^{|dx| |B + B^T|} within the phase bound
      std::string text;
      for (int i = 0; i < enc.axes(); ++i) text += (i ? "," : "") + format_number(offsets(k, i));
      throw_bad_value(where, "offsets", text,
                      "small enough that tr exp(sum_i dx_i B_i) stays in float64 (these generators are not skew, "
                      "so R(dx) can grow exponentially)");
    }
  }
  return phi;
}

}  // namespace ropekit
