#include "ropekit/lie/lie.hpp"

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

namespace ropekit {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kMaxEntries = kMaxGeneratorEntries;
// The pairwise reversibility scan costs (P^2 / 2) n^2 flops for P positions; keep it under ~2^28.
constexpr double kPairwiseFlops = 1 << 28;

// Distinct streams (ropekit::Rng keys) for the pieces that share a user seed.
constexpr std::uint64_t kMixedStream = 0x4D49584544ull, kRandomStream = 0x52414E44ull, kMixingStream = 0x4D4958ull,
                        kTorusStream = 0x544F52ull;

void check_dim(const Where& where, int n, bool even) {
  if (n < 1 || n > kMaxLieDim || (even && n % 2 != 0))
    throw_bad_value(where, "dim", std::to_string(n),
                    even ? fmt::format("a positive even integer <= {}; a torus needs 2x2 planes", kMaxLieDim)
                         : fmt::format("an integer in [1, {}]", kMaxLieDim));
}

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

Eigen::MatrixXd skew_from_upper(int n, Rng& rng) {
  Eigen::MatrixXd S = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      S(i, j) = rng.normal();
      S(j, i) = -S(i, j);
    }
  return S;
}

void check_matrix_finite(std::string_view where, std::string_view name, const Eigen::MatrixXd& M) {
  for (Eigen::Index j = 0; j < M.cols(); ++j)
    for (Eigen::Index i = 0; i < M.rows(); ++i)
      if (!std::isfinite(M(i, j)))
        throw_bad_value(where, fmt::format("{}[{}][{}]", name, i, j), format_number(M(i, j)), "finite");
}

void check_skew_param(std::string_view where, const Eigen::MatrixXd& S) {
  if (S.rows() != S.cols() || S.rows() < 1 || S.rows() > kMaxLieDim)
    throw_bad_value(where, "S", fmt::format("{}x{}", S.rows(), S.cols()),
                    fmt::format("square, n x n with 1 <= n <= {}", kMaxLieDim));
  check_matrix_finite(where, "S", S);
  const double defect = (S + S.transpose()).norm();
  if (!(defect <= 16.0 * S.rows() * kEps * S.norm()))
    throw_bad_value(where, "|S + S^T|_F", format_number(defect), "0, S skew-symmetric");
}

double spectral_norm(const Eigen::MatrixXd& M) {
  if (M.size() == 0) return 0;
  Eigen::BDCSVD<Eigen::MatrixXd> svd(M);
  return svd.singularValues()[0];
}

}  // namespace

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

// ------------------------------------------------------------------------------------------------

namespace {
constexpr EnumTable<MixingKind, 3> kMixingKinds{
    {{MixingKind::cayley, "cayley"}, {MixingKind::exp, "exp"}, {MixingKind::givens, "givens"}}};
}  // namespace

MixingKind parse_mixing_kind(const std::string& name, const Where& where) {
  return parse_enum(kMixingKinds, name, where, "mix");
}

const char* to_string(MixingKind kind) { return to_text(kMixingKinds, kind).data(); }

Eigen::MatrixXd orthogonal(const Mixing& mixing) {
  return std::visit(
      Overloaded{
          [](const mix::Cayley& c) -> Eigen::MatrixXd {
            check_skew_param("Cayley mixing", c.S);
            const Eigen::Index n = c.S.rows();
            const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(n, n);
            // (I - S) and (I + S)^{-1} commute, so Q = (I + S)^{-1} (I - S); I + S is never singular (S skew).
            return (I + c.S).partialPivLu().solve(I - c.S);
          },
          [](const mix::Exp& e) -> Eigen::MatrixXd {
            check_skew_param("exponential mixing", e.S);
            return e.S.exp();
          },
          [](const mix::Givens& g) -> Eigen::MatrixXd {
            const Where where("Givens mixing");
            check_dim(where, g.dim, false);
            const std::size_t count = static_cast<std::size_t>(g.dim) * (g.dim - 1) / 2;
            if (g.angles.size() != count)
              throw_bad_value(where, "angles", fmt::format("{} values", g.angles.size()),
                              fmt::format("n(n-1)/2 = {} values", count));
            Eigen::MatrixXd Q = Eigen::MatrixXd::Identity(g.dim, g.dim);
            std::size_t k = 0;
            for (int i = 0; i < g.dim; ++i)
              for (int j = i + 1; j < g.dim; ++j, ++k) {
                const double a = g.angles[k];
                check_finite(where.context, fmt::format("angles[{}]", k), a);
                const double c = std::cos(a), s = std::sin(a);
                const Eigen::VectorXd qi = Q.col(i), qj = Q.col(j);  // Q <- Q G(i, j, a)
                Q.col(i) = c * qi + s * qj;
                Q.col(j) = -s * qi + c * qj;
              }
            return Q;
          },
      },
      mixing);
}

Mixing random_mixing(MixingKind kind, int dim, std::uint64_t seed) {
  check_dim(Where("random mixing"), dim, false);
  Rng rng(seed, kMixingStream);
  switch (kind) {
    case MixingKind::cayley: return mix::Cayley{skew_from_upper(dim, rng)};
    case MixingKind::exp: return mix::Exp{skew_from_upper(dim, rng)};
    case MixingKind::givens: {
      mix::Givens g{dim, {}};
      g.angles.resize(static_cast<std::size_t>(dim) * (dim - 1) / 2);
      for (auto& a : g.angles) a = std::numbers::pi * (2.0 * rng.uniform() - 1.0);
      return g;
    }
  }
  throw std::logic_error("random_mixing: unknown kind");
}

// ------------------------------------------------------------------------------------------------

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

namespace {
double orthogonality_defect(const Eigen::MatrixXd& Q) {
  const Eigen::MatrixXd D = Q.transpose() * Q - Eigen::MatrixXd::Identity(Q.rows(), Q.cols());
  const double d = D.norm();
  return std::isfinite(d) ? d : D.stableNorm();  // squares overflow beyond |D|_F ~ 1e154
}
double orthogonality_tolerance(Eigen::Index n) { return 16.0 * static_cast<double>(n) * kEps; }
}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

// sum_i |x_i| |B_i|_2 <= max_position_scale(n) for every row x of `positions`; the first row that breaks it, or -1.
// Tries the cheap bound |B_i|_2 <= |B_i|_F first; the exact norms (SVD, or the torus frequencies) only if needed.
struct ScaleCheck {
  Eigen::Index row = -1;
  double scale = 0, largest_norm = 0;
};
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

}  // namespace

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

// ------------------------------------------------------------------------------------------------

void LieCheckOptions::validate(const Where& where) const {
  check_in_range(where, "window", window, 2, 1 << 24);
  check_in_range(where, "pairs", pairs, 1, 1 << 20);
  check_in_range(where, "max_exp", max_exp, 1, std::int64_t{1} << 40);
  check_in_range(where, "max_differences", max_differences, 1, std::int64_t{1} << 40);
}

namespace {

using Point = std::vector<int>;

Eigen::VectorXd to_vector(const Point& p) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(p.size()));
  for (std::size_t i = 0; i < p.size(); ++i) v[static_cast<Eigen::Index>(i)] = p[i];
  return v;
}

// Calls f(d) for every d in [-r, r]^N whose first nonzero coordinate is positive (one of each +-d pair).
template <class F>
void for_each_half_difference(int N, int r, F&& f) {
  Point d(N, -r);
  while (true) {
    auto first = std::find_if(d.begin(), d.end(), [](int v) { return v != 0; });
    if (first != d.end() && *first > 0) f(d);
    int k = N - 1;
    while (k >= 0 && d[k] == r) d[k--] = -r;
    if (k < 0) return;
    ++d[k];
  }
}

double half_cube_count(int N, int r) { return (std::pow(2.0 * r + 1.0, N) - 1.0) / 2.0; }

struct Scan {
  double min = std::numeric_limits<double>::infinity();
  Point x, y;
  std::int64_t checked = 0;
  bool exhaustive = false;
  std::string method;
};

// Reversibility through relativity: |R(x) - R(y)|_F = |I - R(y - x)|_F, one evaluation per difference.
Scan scan_differences(const Encoder& enc, Route route, int W, std::int64_t budget, std::uint64_t seed,
                      const std::function<void()>& tick) {
  const int N = enc.axes(), n = enc.dim();
  const bool closed = route == Route::closed_form;
  Scan s;
  auto visit = [&](const Point& d) {
    double dist;
    const Eigen::VectorXd dv = to_vector(d);
    if (closed) {
      // |I - R(phi)|_F^2 = 4 (1 - cos phi) = 8 sin^2(phi / 2) per plane, without cancellation.
      const Eigen::VectorXd phase = enc.frequencies()->transpose() * dv;
      dist = std::sqrt(8.0 * (0.5 * phase.array()).sin().square().sum());
    } else {
      dist = (Eigen::MatrixXd::Identity(n, n) - enc(dv, route)).norm();
    }
    ++s.checked;
    tick();
    if (dist < s.min) {
      s.min = dist;
      s.x.assign(N, 0);
      s.y.assign(N, 0);
      for (int i = 0; i < N; ++i) s.x[i] = std::max(0, -d[i]), s.y[i] = s.x[i] + d[i];
    }
  };
  const std::string how = closed ? "closed form" : "matrix exponential";
  if (half_cube_count(N, W - 1) <= static_cast<double>(budget)) {
    for_each_half_difference(N, W - 1, visit);
    s.exhaustive = true;
    s.method = fmt::format("every difference y - x in the window, |I - R(y - x)|_F ({})", how);
    return s;
  }
  // Too many: every difference with |d|_inf <= r0 (half the budget), then seeded random differences.
  int r0 = 0;
  while (r0 + 1 < W && half_cube_count(N, r0 + 1) <= budget / 2.0) ++r0;
  if (r0 > 0) for_each_half_difference(N, r0, visit);
  Rng rng(seed, 0);
  while (s.checked < budget) {
    Point d(N);
    for (int i = 0; i < N; ++i) d[i] = static_cast<int>(rng.below(2 * W - 1)) - (W - 1);
    auto first = std::find_if(d.begin(), d.end(), [](int v) { return v != 0; });
    if (first == d.end()) continue;
    if (*first < 0)
      for (auto& v : d) v = -v;
    visit(d);
  }
  s.method = fmt::format("differences with |y - x|_inf <= {} and {} seeded random ones, |I - R(y - x)|_F ({}); sampled",
                         r0, s.checked - static_cast<std::int64_t>(r0 > 0 ? half_cube_count(N, r0) : 0), how);
  return s;
}

// Reversibility without relativity: R at distinct positions, every pair compared directly.
Scan scan_pairwise(const Encoder& enc, Route route, int W, std::int64_t max_exp, std::uint64_t seed,
                   const std::function<void()>& tick) {
  const int N = enc.axes(), n = enc.dim();
  const double all = std::pow(static_cast<double>(W), N);
  const double cap = std::min<double>(static_cast<double>(max_exp), std::max(2.0, std::sqrt(2.0 * kPairwiseFlops) / n));
  std::vector<Point> pos;
  Scan s;
  if (all <= cap) {
    Point p(N, 0);
    while (true) {
      pos.push_back(p);
      int k = N - 1;
      while (k >= 0 && p[k] == W - 1) p[k--] = 0;
      if (k < 0) break;
      ++p[k];
    }
    s.exhaustive = true;
  } else {
    std::set<Point> seen;
    const auto count = static_cast<std::size_t>(cap);
    if (N < 30 && (std::size_t{1} << N) <= count / 2)  // the corners of the window first
      for (std::size_t mask = 0; mask < (std::size_t{1} << N); ++mask) {
        Point p(N);
        for (int i = 0; i < N; ++i) p[i] = (mask >> i) & 1 ? W - 1 : 0;
        if (seen.insert(p).second) pos.push_back(p);
      }
    Rng rng(seed, 0);
    while (pos.size() < count) {
      Point p(N);
      for (int i = 0; i < N; ++i) p[i] = static_cast<int>(rng.below(W));
      if (seen.insert(p).second) pos.push_back(p);
    }
  }
  std::vector<Eigen::MatrixXd> R(pos.size());
  parallel_for(pos.size(), 0, [&](std::size_t a) {
    R[a] = enc(to_vector(pos[a]), route);
    tick();
  });
  // Row a's closest later position; rows reduced in order, so ties resolve the same on any thread count.
  std::vector<std::pair<double, std::size_t>> row_min(pos.size(), {std::numeric_limits<double>::infinity(), 0});
  parallel_for(pos.size(), 0, [&](std::size_t a) {
    for (std::size_t b = a + 1; b < pos.size(); ++b)
      if (const double dist = (R[a] - R[b]).norm(); dist < row_min[a].first || std::isnan(dist)) row_min[a] = {dist, b};
  });
  for (std::size_t a = 0; a < pos.size(); ++a) {
    s.checked += static_cast<std::int64_t>(pos.size() - a - 1);
    if (row_min[a].first < s.min || std::isnan(row_min[a].first))
      s.min = row_min[a].first, s.x = pos[a], s.y = pos[row_min[a].second];
  }
  s.method = s.exhaustive ? fmt::format("every pair of the {} window positions, |R(x) - R(y)|_F", pos.size())
                          : fmt::format("every pair of {} positions (window corners and seeded random ones) of the {} "
                                        "in the window, |R(x) - R(y)|_F; sampled",
                                        pos.size(), format_number(all));
  (void)n;
  return s;
}

}  // namespace

namespace {

constexpr double kPairwiseCap = 1 << 28;  // see scan_pairwise

// Positions the pairwise scan compares, as scan_pairwise chooses them.
double pairwise_positions(int n, int N, int W, std::int64_t max_exp) {
  const double cap = std::min<double>(static_cast<double>(max_exp), std::max(2.0, std::sqrt(2.0 * kPairwiseCap) / n));
  return std::min(std::pow(static_cast<double>(W), N), std::floor(cap));
}

// Flops of the pieces of check(): one R(x), the fixed part, and the reversibility scan.
struct LieWork {
  double per_r = 0, fixed = 0, relativity = 0, scan = 0;
  double total() const { return fixed + relativity + scan; }
};

LieWork lie_work(const GeneratorSet& set, const LieCheckOptions& o, bool closed, bool commuting) {
  const double n = set.dim, N = set.axes(), n3 = n * n * n, W = o.window;
  LieWork w;
  if (closed) {
    w.per_r = set.mixing ? 4 * n3 : n * n;  // Q E Q^T, or filling E
  } else {
    // Scaling and squaring: about 10 products for the Pade approximant, one per squaring; the norm of
    // (W - 1) sum_i B_i bounds the squarings (|.|_F >= |.|_2: an overestimate).
    double f = 0;
    for (const auto& t : set.base) f += t.stableNorm();
    if (set.mixing) f *= std::max(1.0, set.mixing->stableNorm() * set.mixing->stableNorm() / n);
    const double squarings = std::max(0.0, std::ceil(std::log2(std::max(1.0, (W - 1) * f / 5.4))));
    w.per_r = 2 * n3 * (10 + std::min(squarings, 2000.0));
  }
  // Acting generators, commutators, spectral norms, the rank SVD, Q's checks.
  w.fixed = (set.mixing ? N * 4 * n3 + 3 * n3 : 0) + 2 * N * (N - 1) * n3 + N * 4 * n3 + 4 * n * n * N * N;
  w.relativity = o.pairs * (3 * w.per_r + 2 * n3 + n * n);
  if (commuting) {
    const double all = (std::pow(2.0 * W - 1, N) - 1) / 2;
    const double count = std::min(all, static_cast<double>(closed ? o.max_differences : o.max_exp));
    w.scan = count * (closed ? 10 * N * n : w.per_r + n * n);
  } else {
    const double P = pairwise_positions(set.dim, set.axes(), o.window, o.max_exp);
    w.scan = P * w.per_r + P * P / 2 * n * n;
  }
  return w;
}

Cost work_cost(const GeneratorSet& set, const LieWork& w, const LieCheckOptions& o) {
  const double n = set.dim, N = set.axes();
  const double P = pairwise_positions(set.dim, set.axes(), o.window, o.max_exp);
  // The acting generators and Q, the relativity pairs' positions, R at the pairwise positions (n x n each).
  const double bytes = 8 * (n * n * (3 * N + 4) + o.pairs * 2 * N + n * n * N * 2) + 8 * P * n * n;
  return Cost{bytes, w.total() / kFlopsPerSecond};
}

// Blames the option whose reduction makes the check fit the budget: --pairs, then --max-exp, then --window.
void check_lie_budget(const GeneratorSet& set, const LieCheckOptions& o, bool closed, bool commuting,
                      const Where& where) {
  const Cost cost = work_cost(set, lie_work(set, o, closed, commuting), o);
  if (cost.fits()) return;
  auto fits_with = [&](auto&& change) {
    LieCheckOptions u = o;
    change(u);
    return work_cost(set, lie_work(set, u, closed, commuting), u).fits();
  };
  const std::string for_what = fmt::format("for n = {}, N = {} by {}", set.dim, set.axes(),
                                           closed ? "the closed form" : "matrix exponentials");
  if (fits_with([](LieCheckOptions& u) { u.pairs = 1; })) {
    const auto v = largest_fitting(1, o.pairs, [&](std::int64_t k) {
      return fits_with([&](LieCheckOptions& u) { u.pairs = static_cast<int>(k); });
    });
    check_cost(where, "pairs", std::to_string(o.pairs), cost, std::to_string(v), for_what);
  }
  if (fits_with([](LieCheckOptions& u) { u.pairs = 1, u.max_exp = 1, u.max_differences = 1; })) {
    const bool diff = commuting && closed;
    const std::int64_t current = diff ? o.max_differences : o.max_exp;
    const auto v = largest_fitting(1, current, [&](std::int64_t k) {
      return fits_with([&](LieCheckOptions& u) { (diff ? u.max_differences : u.max_exp) = k; });
    });
    check_cost(where, diff ? "max_differences" : "max_exp", std::to_string(current), cost, std::to_string(v),
               for_what + fmt::format(" with {} {}", where.name("pairs"), o.pairs));
  }
  throw_bad_value(where, "generators", fmt::format("{} matrices of {} x {}", set.axes(), set.dim, set.dim),
                  fmt::format("fewer or smaller: even one relativity pair and one scan step {}", cost.excess()));
}

}  // namespace

Cost lie_check_cost(const GeneratorSet& set, const LieCheckOptions& o) {
  // Before the checks run, a set on the maximal torus (with an orthogonal or no Q) counts as commuting,
  // any other as not: check() re-estimates with the measured verdict before its scan.
  const bool torus = detect_torus(set.base).has_value();
  const bool closed = torus && (!set.mixing || orthogonality_defect(*set.mixing) <= orthogonality_tolerance(set.dim));
  const bool closed_route = closed && o.route != Route::matrix_exp;
  return work_cost(set, lie_work(set, o, closed_route, torus), o);
}

void check_lie_inputs(const GeneratorSet& set, const LieCheckOptions& opt, const Where& where) {
  opt.validate(where);
  set.validate();
  check_mixing_range(set, where.context);
  const Encoder enc(set);
  const bool closed = enc.resolve(opt.route, where) == Route::closed_form;
  check_lie_budget(set, opt, closed, detect_torus(set.base).has_value(), where);
  // Every position of the window must be resolvable: (W - 1) sum_i |B_i|_2 <= max_position_scale(n).
  const int n = enc.dim(), N = enc.axes();
  const double limit = max_position_scale(n);
  if (find_unresolvable(enc, Eigen::MatrixXd::Constant(1, N, opt.window - 1.0)).row < 0) return;
  const std::vector<double> norms = spectral_norms(enc, true);
  double sum_2 = 0;
  for (double v : norms) sum_2 += v;
  if (!(sum_2 <= limit))
    throw_bad_value(where, "generators", fmt::format("sum_i |B_i|_2 = {:.3g}", sum_2),
                    fmt::format("at most 1/(16 sqrt(n) eps) = {:.3g} (n = {}): beyond it rounding of the phases is no "
                                "longer small against 1/sqrt(n) and the relativity tolerance exceeds any defect",
                                limit, n));
  throw_bad_value(where, "window", std::to_string(opt.window),
                  fmt::format("at most {} for these generators: (W - 1) sum_i |B_i|_2 must stay <= 1/(16 sqrt(n) "
                              "eps) = {:.3g}, here sum_i |B_i|_2 = {:.3g}",
                              static_cast<long long>(std::floor(limit / sum_2)) + 1, limit, sum_2));
}

LieCheck check(const GeneratorSet& set, const LieCheckOptions& opt, const Where& where) {
  check_lie_inputs(set, opt, where);
  const Encoder enc(set);
  const Route route = enc.resolve(opt.route, where);
  const bool closed = route == Route::closed_form;
  const bool torus_guess = detect_torus(set.base).has_value();
  const auto& B = enc.acting();
  const int n = enc.dim(), N = enc.axes();
  double sum_2 = 0;
  for (const auto& b : B) sum_2 += spectral_norm(b);

  // Progress: the fraction of the estimated flops done.
  LieWork work = lie_work(set, opt, closed, torus_guess);
  std::mutex meter_mutex;
  double done = 0;
  auto advance = [&](double flops) {
    if (!opt.progress) return;
    std::lock_guard<std::mutex> lock(meter_mutex);
    done += flops;
    opt.progress(std::min(1.0, done / std::max(1.0, work.total())));
  };

  LieCheck c;
  c.dim = n;
  c.axes = N;
  c.window = opt.window;
  c.masa_bound = n / 2;
  c.route = closed ? "closed-form torus" : "matrix exponential";

  double max_f = 0;
  for (const auto& b : B) max_f = std::max(max_f, b.norm());
  for (const auto& b : B) c.skew_defect = std::max(c.skew_defect, (b + b.transpose()).norm());
  c.skew_tolerance = 16.0 * n * kEps * max_f;
  for (int i = 0; i < N; ++i)
    for (int j = i + 1; j < N; ++j) c.max_commutator = std::max(c.max_commutator, (B[i] * B[j] - B[j] * B[i]).norm());
  c.commutator_tolerance = 16.0 * n * kEps * max_f * max_f;

  Eigen::MatrixXd V(static_cast<Eigen::Index>(n) * n, N);
  for (int i = 0; i < N; ++i) V.col(i) = B[i].reshaped();
  const Eigen::VectorXd sv = Eigen::BDCSVD<Eigen::MatrixXd>(V).singularValues();
  c.singular_values.assign(sv.data(), sv.data() + sv.size());
  c.rank_tolerance = std::max<double>(static_cast<double>(n) * n, N) * kEps * (sv.size() ? sv[0] : 0.0);
  c.rank = static_cast<int>((sv.array() > c.rank_tolerance).count());

  if (set.mixing) {
    c.has_mixing = true;
    c.orthogonality_defect = orthogonality_defect(*set.mixing);
    c.orthogonality_tolerance = orthogonality_tolerance(n);
    c.det_q = set.mixing->determinant();
    c.orthogonal = c.orthogonality_defect <= c.orthogonality_tolerance;
  }

  c.window_scale = (opt.window - 1) * sum_2;
  advance(work.fixed);
  c.relativity_tolerance = 32.0 * n * kEps * (1.0 + c.window_scale);

  // Relativity: the two far corners, then seeded random pairs of window positions.
  Rng rng(opt.seed, 0);
  const int W = opt.window;
  std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> pairs(static_cast<std::size_t>(opt.pairs));
  for (int k = 0; k < opt.pairs; ++k) {
    Eigen::VectorXd x1(N), x2(N);
    if (k < 2) {
      x1.setConstant(k == 0 ? 0.0 : W - 1.0);
      x2.setConstant(k == 0 ? W - 1.0 : 0.0);
    } else {
      for (int i = 0; i < N; ++i) x1[i] = static_cast<int>(rng.below(W)), x2[i] = static_cast<int>(rng.below(W));
    }
    pairs[static_cast<std::size_t>(k)] = {x1, x2};
  }
  std::vector<double> defect(pairs.size());
  parallel_for(pairs.size(), 0, [&](std::size_t k) {
    const auto& [x1, x2] = pairs[k];
    defect[k] = (enc(x1, route).transpose() * enc(x2, route) - enc(x2 - x1, route)).norm();
    advance(work.relativity / static_cast<double>(pairs.size()));
  });
  for (double d : defect) keep_max(c.relativity_defect, d);
  c.pairs_checked = opt.pairs;
  // Within the phase bound a skew set stays finite; a non-skew one can grow like e^{|x| |B + B^T|} and leave float64.
  auto refuse_overflow = [&](std::string_view what) {
    throw_bad_value(where, "window", std::to_string(W),
                    fmt::format("small enough that R(x) = exp(sum_i x_i B_i) stays in float64: these generators are "
                                "not skew (max |B_i + B_i^T|_F = {:.3g}) and {} is not finite in this window",
                                c.skew_defect, what));
  };
  if (!std::isfinite(c.relativity_defect)) refuse_overflow("R(x1)^T R(x2) - R(x2 - x1)");

  c.skew = c.skew_defect <= c.skew_tolerance;
  c.commuting = c.max_commutator <= c.commutator_tolerance;
  c.independent = c.rank == N;
  c.within_masa_bound = N <= c.masa_bound;
  c.relativity = c.relativity_defect <= c.relativity_tolerance;

  // The scan's cost with the measured verdict (a commuting set off the torus scans differences by
  // matrix exponentials): refuse before it if that breaks the budget.
  const bool differences = c.skew && c.commuting;
  if (differences != torus_guess) {
    check_lie_budget(set, opt, closed, differences, where);
    const double before = work.fixed + work.relativity;
    work = lie_work(set, opt, closed, differences);
    done = std::min(done, before);
  }
  const double per_step = differences ? (closed ? 10.0 * N * n : work.per_r) : work.per_r;
  const std::function<void()> tick = [&] { advance(per_step); };
  const Scan s = differences
                     ? scan_differences(enc, route, W, route == Route::closed_form ? opt.max_differences : opt.max_exp,
                                        opt.seed ^ 0xD1FFull, tick)
                     : scan_pairwise(enc, route, W, opt.max_exp, opt.seed ^ 0x9A12ull, tick);
  if (!std::isfinite(s.min)) refuse_overflow("|R(x) - R(y)|_F");
  c.min_position_distance = s.min;
  c.closest_x = s.x;
  c.closest_y = s.y;
  c.distances_checked = s.checked;
  c.distances_exhaustive = s.exhaustive;
  c.distance_method = s.method;
  c.reversibility = c.independent && c.min_position_distance > c.relativity_tolerance;
  return c;
}

std::string LieCheck::brief_report() const {
  auto yes = [](bool b) { return b ? "yes" : "NO"; };
  std::string out = fmt::format("n = {}, N = {} (MASA bound floor(n/2) = {}), window {}^{}, route: {}\n", dim, axes,
                                masa_bound, window, axes, route);
  out += fmt::format("skew          {:<4} max |B + B^T|_F = {:.3e} (tolerance {:.3e})\n", yes(skew), skew_defect,
                     skew_tolerance);
  out += fmt::format("commuting     {:<4} max |[B_i, B_j]|_F = {:.3e} (tolerance {:.3e})\n", yes(commuting),
                     max_commutator, commutator_tolerance);
  out += fmt::format("independent   {:<4} rank {} of {}\n", yes(independent), rank, axes);
  out += fmt::format("relativity    {:<4} defect {:.3e} over {} pairs (tolerance {:.3e})\n", yes(relativity),
                     relativity_defect, pairs_checked, relativity_tolerance);
  out += fmt::format("reversibility {:<4} min |R(x) - R(y)|_F = {:.3e} over {} comparisons{}\n", yes(reversibility),
                     min_position_distance, distances_checked, distances_exhaustive ? "" : " (sampled)");
  if (has_mixing)
    out += fmt::format("orthogonal Q  {:<4} |Q^T Q - I|_F = {:.3e}, det Q = {:.15g}\n", yes(orthogonal),
                       orthogonality_defect, det_q);
  return out;
}

}  // namespace ropekit
