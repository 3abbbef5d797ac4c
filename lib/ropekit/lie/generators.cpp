#include "ropekit/lie/generators.hpp"

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

namespace {

constexpr double kMaxEntries = kMaxGeneratorEntries;

// Distinct streams (ropekit::Rng keys) for the pieces that share a user seed.
constexpr std::uint64_t kMixedStream = 0x4D49584544ull, kRandomStream = 0x52414E44ull, kTorusStream = 0x544F52ull;

void check_axes(const Where& where, int axes, int dim) {
  check_at_least(where, "axes", axes, 1);
  if (static_cast<double>(axes) * dim * dim > kMaxEntries)
    throw_bad_value(where, "axes", std::to_string(axes),
                    fmt::format("<= {} for {} {}: axes * dim^2 numbers at most {}",
                                static_cast<long long>(kMaxEntries) / (static_cast<long long>(dim) * dim),
                                where.name("dim"), dim, static_cast<long long>(kMaxEntries)));
}

// Plane groups of Axial / Mixed: group a owns planes [start[a], start[a+1]).
std::vector<int> group_starts(int planes, int axes) {
  std::vector<int> start(axes + 1, 0);
  for (int a = 0; a < axes; ++a) start[a + 1] = start[a] + planes / axes + (a < planes % axes ? 1 : 0);
  return start;
}

void check_grouped(const Where& where, int dim, int axes, double base) {
  check_dim(where, dim, true);
  check_axes(where, axes, dim);
  if (axes > dim / 2)
    throw_bad_value(where, "axes", std::to_string(axes),
                    fmt::format("<= {}/2 = {}, one plane per axis at least", where.name("dim"), dim / 2));
  check_positive(where, "base", base);
}

// Haar-random rotation in SO(N): QR of a Gaussian matrix with the signs of R's diagonal fixed.
Eigen::MatrixXd random_rotation(int N, Rng& rng) {
  if (N == 2) {  // Heo et al.: u_0 = (cos phi, sin phi), u_1 = (cos(phi + pi/2), sin(phi + pi/2))
    const double phi = 2.0 * std::numbers::pi * rng.uniform();
    Eigen::MatrixXd O(2, 2);
    O << std::cos(phi), std::cos(phi + std::numbers::pi / 2), std::sin(phi), std::sin(phi + std::numbers::pi / 2);
    return O;
  }
  Eigen::MatrixXd G(N, N);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) G(i, j) = rng.normal();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
  Eigen::MatrixXd O = qr.householderQ();
  const Eigen::MatrixXd R = qr.matrixQR().triangularView<Eigen::Upper>();
  for (int j = 0; j < N; ++j)
    if (R(j, j) < 0) O.col(j) *= -1;
  if (O.determinant() < 0) O.col(0) *= -1;
  return O;
}

}  // namespace

namespace lie_detail {

void check_dim(const Where& where, int n, bool even) {
  if (n < 1 || n > kMaxLieDim || (even && n % 2 != 0))
    throw_bad_value(where, "dim", std::to_string(n),
                    even ? fmt::format("a positive even integer <= {}; a torus needs 2x2 planes", kMaxLieDim)
                         : fmt::format("an integer in [1, {}]", kMaxLieDim));
}

}  // namespace lie_detail

// ------------------------------------------------------------------------------------------------

void GeneratorSet::validate(const std::string& where) const {
  Where w(where);
  w.rename("dim", "dimension").rename("axes", "number of generators");
  check_dim(w, dim, false);
  if (base.empty()) throw_bad_value(where, "generators", "[] (empty)", "at least one n x n matrix");
  check_axes(w, axes(), dim);
  for (std::size_t i = 0; i < base.size(); ++i) {
    const auto& T = base[i];
    if (T.rows() != dim || T.cols() != dim)
      throw_bad_value(where, fmt::format("generators[{}]", i), fmt::format("{}x{}", T.rows(), T.cols()),
                      fmt::format("{0}x{0}, the dimension", dim));
    check_matrix_finite(where, fmt::format("generators[{}]", i), T);
  }
  if (mixing) {
    if (mixing->rows() != dim || mixing->cols() != dim)
      throw_bad_value(where, "Q", fmt::format("{}x{}", mixing->rows(), mixing->cols()),
                      fmt::format("{0}x{0}, the dimension", dim));
    check_matrix_finite(where, "Q", *mixing);
  }
}

std::vector<Eigen::MatrixXd> GeneratorSet::acting() const {
  if (!mixing) return base;
  std::vector<Eigen::MatrixXd> B;
  B.reserve(base.size());
  for (const auto& T : base) B.push_back(*mixing * T * mixing->transpose());
  return B;
}

Eigen::MatrixXd torus_frequencies(const GeneratorFamily& family, const Where& where) {
  return std::visit(
      Overloaded{
          [&](const gen::Axial& a) -> Eigen::MatrixXd {
            check_grouped(where, a.dim, a.axes, a.base);
            const int planes = a.dim / 2;
            const auto start = group_starts(planes, a.axes);
            Eigen::MatrixXd W = Eigen::MatrixXd::Zero(a.axes, planes);
            for (int g = 0; g < a.axes; ++g) {
              const int K = start[g + 1] - start[g];
              for (int k = 0; k < K; ++k) W(g, start[g] + k) = geometric_frequency(a.base, k, 2 * K);
            }
            return W;
          },
          [&](const gen::Mixed& m) -> Eigen::MatrixXd {
            check_grouped(where, m.dim, m.axes, m.base);
            Rng rng(m.seed, kMixedStream);
            const Eigen::MatrixXd O = m.axes == 1 ? Eigen::MatrixXd::Ones(1, 1) : random_rotation(m.axes, rng);
            const int planes = m.dim / 2;
            const auto start = group_starts(planes, m.axes);
            Eigen::MatrixXd W(m.axes, planes);
            for (int g = 0; g < m.axes; ++g) {
              const int K = start[g + 1] - start[g];
              for (int k = 0; k < K; ++k) W.col(start[g] + k) = geometric_frequency(m.base, k, 2 * K) * O.col(g);
            }
            return W;
          },
          [&](const gen::Torus& t) -> Eigen::MatrixXd {
            if (t.frequencies.rows() < 1) throw_bad_value(where, "axes", "0", "an integer >= 1");
            check_dim(where, static_cast<int>(2 * t.frequencies.cols()), true);
            check_axes(where, static_cast<int>(t.frequencies.rows()), static_cast<int>(2 * t.frequencies.cols()));
            check_matrix_finite(where.context, where.name("freqs"), t.frequencies);
            return t.frequencies;
          },
          [&](const gen::Random&) -> Eigen::MatrixXd {
            throw InputError(where.context + ": random (LieRE) generators are not on a torus");
          },
          [&](const gen::User&) -> Eigen::MatrixXd {
            throw InputError(where.context + ": user matrices have no torus frequencies");
          },
      },
      family);
}

Eigen::MatrixXd random_torus_frequencies(int axes, int dim, double base, std::uint64_t seed, const Where& where) {
  check_dim(where, dim, true);
  check_axes(where, axes, dim);
  check_positive(where, "base", base);
  Rng rng(seed, kTorusStream);
  Eigen::MatrixXd W(axes, dim / 2);
  for (int i = 0; i < axes; ++i)
    for (int b = 0; b < dim / 2; ++b) W(i, b) = std::pow(base, -rng.uniform());
  return W;
}

std::vector<Eigen::MatrixXd> torus_generators(const Eigen::MatrixXd& W) {
  const int n = static_cast<int>(2 * W.cols());
  std::vector<Eigen::MatrixXd> T;
  for (Eigen::Index i = 0; i < W.rows(); ++i) {
    Eigen::MatrixXd Ti = Eigen::MatrixXd::Zero(n, n);
    for (Eigen::Index b = 0; b < W.cols(); ++b) {
      Ti(2 * b, 2 * b + 1) = 0.0 - W(i, b);  // +0, not -0, for a zero frequency
      Ti(2 * b + 1, 2 * b) = W(i, b);
    }
    T.push_back(std::move(Ti));
  }
  return T;
}

GeneratorSet generators(const GeneratorFamily& family, const Where& where) {
  GeneratorSet set;
  std::visit(Overloaded{
                 [&](const gen::Axial& a) {
                   set.base = torus_generators(torus_frequencies(family, where));
                   set.description = fmt::format("axial N-D RoPE: dim={}, axes={}, base={}", a.dim, a.axes,
                                                 format_number(a.base));
                 },
                 [&](const gen::Mixed& m) {
                   set.base = torus_generators(torus_frequencies(family, where));
                   set.description = fmt::format("mixed RoPE (Heo et al. 2024): dim={}, axes={}, base={}, seed={}",
                                                 m.dim, m.axes, format_number(m.base), m.seed);
                 },
                 [&](const gen::Torus& t) {
                   set.base = torus_generators(torus_frequencies(family, where));
                   set.description = fmt::format("torus with given frequencies: dim={}, axes={}", 2 * t.frequencies.cols(),
                                                 t.frequencies.rows());
                 },
                 [&](const gen::Random& r) {
                   check_dim(where, r.dim, false);
                   check_axes(where, r.axes, r.dim);
                   check_positive(where, "scale", r.scale);
                   Rng rng(r.seed, kRandomStream);
                   const double s = r.scale / std::sqrt(2.0 * r.dim);
                   double largest = 0;  // max |A - A^T| over all draws: the entries are s times it
                   for (int i = 0; i < r.axes; ++i) {
                     Eigen::MatrixXd A(r.dim, r.dim);
                     for (int c = 0; c < r.dim; ++c)
                       for (int k = 0; k < r.dim; ++k) A(k, c) = rng.normal();
                     const Eigen::MatrixXd D = A - A.transpose();
                     largest = std::max(largest, D.cwiseAbs().maxCoeff());
                     set.base.push_back(s * D);
                   }
                   if (!(s * largest <= std::numeric_limits<double>::max()))
                     throw_bad_value(where, "scale", format_number(r.scale),
                                     fmt::format("at most {} for these draws: the entries scale (A - A^T)/sqrt(2n) "
                                                 "must be finite numbers",
                                                 format_number(std::numeric_limits<double>::max() / largest *
                                                               std::sqrt(2.0 * r.dim))));
                   set.description = fmt::format("LieRE-style dense random: dim={}, axes={}, scale={}, seed={}", r.dim,
                                                 r.axes, format_number(r.scale), r.seed);
                 },
                 [&](const gen::User& u) {
                   set.base = u.matrices;
                   set.description = "user matrices";
                 },
             },
             family);
  set.dim = set.base.empty() ? 0 : static_cast<int>(set.base.front().rows());
  set.validate(where.context);
  return set;
}

Eigen::MatrixXd hat(const std::vector<Eigen::MatrixXd>& B, const Eigen::VectorXd& x) {
  if (static_cast<std::size_t>(x.size()) != B.size() || B.empty())
    throw std::invalid_argument(fmt::format("ropekit::hat: {} coordinates for {} generators", x.size(), B.size()));
  Eigen::MatrixXd A = x[0] * B[0];
  for (std::size_t i = 1; i < B.size(); ++i) A += x[static_cast<Eigen::Index>(i)] * B[i];
  return A;
}

}  // namespace ropekit
