#include "ropekit/lie.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/error.hpp"
#include "ropekit/parallel.hpp"
#include "ropekit/keep_max.hpp"
#include "ropekit/rng.hpp"
#include "ropekit/overloaded.hpp"

namespace ropekit {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kMaxEntries = kMaxGeneratorEntries;
// The pairwise reversibility scan costs (P^2 / 2) n^2 flops for P positions; keep it under ~2^28.
constexpr double kPairwiseFlops = 1 << 28;

// Distinct streams (ropekit::Rng keys) for the pieces that share a user seed.
constexpr std::uint64_t kMixedStream = 0x4D49584544ull, kRandomStream = 0x52414E44ull, kMixingStream = 0x4D4958ull,
                        kTorusStream = 0x544F52ull;

void check_dim(std::string_view where, int n, bool even) {
  if (n < 1 || n > kMaxLieDim || (even && n % 2 != 0))
    throw_bad_value(where, "dim", std::to_string(n),
                    even ? fmt::format("a positive even integer <= {}; a torus needs 2x2 planes", kMaxLieDim)
                         : fmt::format("an integer in [1, {}]", kMaxLieDim));
}

void check_axes(std::string_view where, int axes, int dim) {
  check_at_least(where, "axes", axes, 1);
  if (static_cast<double>(axes) * dim * dim > kMaxEntries)
    throw_bad_value(where, "axes", std::to_string(axes),
                    fmt::format("<= {} for dim = {}: axes * dim^2 numbers at most {}",
                                static_cast<long long>(kMaxEntries) / (static_cast<long long>(dim) * dim), dim,
                                static_cast<long long>(kMaxEntries)));
}

// Plane groups of Axial / Mixed: group a owns planes [start[a], start[a+1]).
std::vector<int> group_starts(int planes, int axes) {
  std::vector<int> start(axes + 1, 0);
  for (int a = 0; a < axes; ++a) start[a + 1] = start[a] + planes / axes + (a < planes % axes ? 1 : 0);
  return start;
}

void check_grouped(std::string_view where, int dim, int axes, double base) {
  check_dim(where, dim, true);
  check_axes(where, axes, dim);
  if (axes > dim / 2)
    throw_bad_value(where, "axes", std::to_string(axes), fmt::format("<= dim/2 = {}, one plane per axis at least", dim / 2));
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
  check_dim(where, dim, false);
  if (base.empty()) throw_bad_value(where, "generators", "[] (empty)", "at least one n x n matrix");
  check_axes(where, axes(), dim);
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

Eigen::MatrixXd torus_frequencies(const GeneratorFamily& family) {
  return std::visit(
      Overloaded{
          [](const gen::Axial& a) -> Eigen::MatrixXd {
            check_grouped("ropekit::gen::Axial", a.dim, a.axes, a.base);
            const int planes = a.dim / 2;
            const auto start = group_starts(planes, a.axes);
            Eigen::MatrixXd W = Eigen::MatrixXd::Zero(a.axes, planes);
            for (int g = 0; g < a.axes; ++g) {
              const int K = start[g + 1] - start[g];
              for (int k = 0; k < K; ++k) W(g, start[g] + k) = std::pow(a.base, -static_cast<double>(k) / K);
            }
            return W;
          },
          [](const gen::Mixed& m) -> Eigen::MatrixXd {
            check_grouped("ropekit::gen::Mixed", m.dim, m.axes, m.base);
            Rng rng(m.seed, kMixedStream);
            const Eigen::MatrixXd O = m.axes == 1 ? Eigen::MatrixXd::Ones(1, 1) : random_rotation(m.axes, rng);
            const int planes = m.dim / 2;
            const auto start = group_starts(planes, m.axes);
            Eigen::MatrixXd W(m.axes, planes);
            for (int g = 0; g < m.axes; ++g) {
              const int K = start[g + 1] - start[g];
              for (int k = 0; k < K; ++k) W.col(start[g] + k) = std::pow(m.base, -static_cast<double>(k) / K) * O.col(g);
            }
            return W;
          },
          [](const gen::Torus& t) -> Eigen::MatrixXd {
            constexpr const char* where = "ropekit::gen::Torus";
            if (t.frequencies.rows() < 1) throw_bad_value(where, "axes", "0", "an integer >= 1");
            check_dim(where, static_cast<int>(2 * t.frequencies.cols()), true);
            check_axes(where, static_cast<int>(t.frequencies.rows()), static_cast<int>(2 * t.frequencies.cols()));
            check_matrix_finite(where, "frequencies", t.frequencies);
            return t.frequencies;
          },
          [](const gen::Random&) -> Eigen::MatrixXd {
            throw InputError("ropekit::torus_frequencies: random (LieRE) generators are not on a torus");
          },
          [](const gen::User&) -> Eigen::MatrixXd {
            throw InputError("ropekit::torus_frequencies: user matrices have no torus frequencies");
          },
      },
      family);
}

Eigen::MatrixXd random_torus_frequencies(int axes, int dim, double base, std::uint64_t seed) {
  constexpr const char* where = "ropekit::random_torus_frequencies";
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

GeneratorSet generators(const GeneratorFamily& family) {
  GeneratorSet set;
  std::visit(Overloaded{
                 [&](const gen::Axial& a) {
                   set.base = torus_generators(torus_frequencies(family));
                   set.description = fmt::format("axial N-D RoPE: dim={}, axes={}, base={}", a.dim, a.axes,
                                                 format_number(a.base));
                 },
                 [&](const gen::Mixed& m) {
                   set.base = torus_generators(torus_frequencies(family));
                   set.description = fmt::format("mixed RoPE (Heo et al. 2024): dim={}, axes={}, base={}, seed={}",
                                                 m.dim, m.axes, format_number(m.base), m.seed);
                 },
                 [&](const gen::Torus& t) {
                   set.base = torus_generators(torus_frequencies(family));
                   set.description = fmt::format("torus with given frequencies: dim={}, axes={}", 2 * t.frequencies.cols(),
                                                 t.frequencies.rows());
                 },
                 [&](const gen::Random& r) {
                   constexpr const char* where = "ropekit::gen::Random";
                   check_dim(where, r.dim, false);
                   check_axes(where, r.axes, r.dim);
                   check_positive(where, "scale", r.scale);
                   Rng rng(r.seed, kRandomStream);
                   const double s = r.scale / std::sqrt(2.0 * r.dim);
                   for (int i = 0; i < r.axes; ++i) {
                     Eigen::MatrixXd A(r.dim, r.dim);
                     for (int c = 0; c < r.dim; ++c)
                       for (int k = 0; k < r.dim; ++k) A(k, c) = rng.normal();
                     set.base.push_back(s * (A - A.transpose()));
                   }
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
  set.validate("ropekit::generators");
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

MixingKind parse_mixing_kind(const std::string& name) {
  if (name == "cayley") return MixingKind::cayley;
  if (name == "exp") return MixingKind::exp;
  if (name == "givens") return MixingKind::givens;
  throw_bad_value("ropekit", "mix", "'" + name + "'", "cayley, exp or givens");
}

const char* to_string(MixingKind kind) {
  switch (kind) {
    case MixingKind::cayley: return "cayley";
    case MixingKind::exp: return "exp";
    case MixingKind::givens: return "givens";
  }
  return "?";
}

Eigen::MatrixXd orthogonal(const Mixing& mixing) {
  return std::visit(
      Overloaded{
          [](const mix::Cayley& c) -> Eigen::MatrixXd {
            check_skew_param("ropekit::mix::Cayley", c.S);
            const Eigen::Index n = c.S.rows();
            const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(n, n);
            // (I - S) and (I + S)^{-1} commute, so Q = (I + S)^{-1} (I - S); I + S is never singular (S skew).
            return (I + c.S).partialPivLu().solve(I - c.S);
          },
          [](const mix::Exp& e) -> Eigen::MatrixXd {
            check_skew_param("ropekit::mix::Exp", e.S);
            return e.S.exp();
          },
          [](const mix::Givens& g) -> Eigen::MatrixXd {
            constexpr const char* where = "ropekit::mix::Givens";
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
                check_finite(where, fmt::format("angles[{}]", k), a);
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
  check_dim("ropekit::random_mixing", dim, false);
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
  return (Q.transpose() * Q - Eigen::MatrixXd::Identity(Q.rows(), Q.cols())).norm();
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

Route Encoder::resolve(Route route) const {
  if (route == Route::automatic) return has_closed_form() ? Route::closed_form : Route::matrix_exp;
  if (route == Route::closed_form && !has_closed_form())
    throw_bad_value("ropekit::Encoder", "route", "closed-form",
                    "available only for generators on the maximal torus with an orthogonal Q or none");
  return route;
}

Eigen::MatrixXd Encoder::operator()(const Eigen::VectorXd& x, Route route) const {
  if (x.size() != axes())
    throw_bad_value("ropekit::Encoder", "position size", std::to_string(x.size()), fmt::format("{}, the axes", axes()));
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
    throw_bad_value("ropekit::Encoder", "offset size", std::to_string(dx.size()), fmt::format("{}, the axes", axes()));
  if (resolve(route) == Route::matrix_exp) return (*this)(dx, Route::matrix_exp).trace() / dim_;
  const Eigen::VectorXd phase = frequencies_->transpose() * dx;
  return 2.0 * phase.array().cos().sum() / dim_;
}

Eigen::VectorXd induced_kernel(const GeneratorSet& set, const Eigen::MatrixXd& offsets, Route route) {
  const Encoder enc(set);
  if (offsets.cols() != enc.axes())
    throw_bad_value("ropekit::induced_kernel", "offset columns", std::to_string(offsets.cols()),
                    fmt::format("{}, the axes", enc.axes()));
  Eigen::VectorXd phi(offsets.rows());
  for (Eigen::Index k = 0; k < offsets.rows(); ++k) phi[k] = enc.kernel(offsets.row(k).transpose(), route);
  return phi;
}

// ------------------------------------------------------------------------------------------------

void LieCheckOptions::validate() const {
  constexpr const char* where = "ropekit::LieCheckOptions";
  check_at_least(where, "window", window, 2);
  if (window > (1 << 24)) throw_bad_value(where, "window", std::to_string(window), "<= 16777216");
  check_at_least(where, "pairs", pairs, 1);
  if (pairs > (1 << 20)) throw_bad_value(where, "pairs", std::to_string(pairs), "<= 1048576");
  check_at_least(where, "max_exp", max_exp, 1);
  check_at_least(where, "max_differences", max_differences, 1);
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
Scan scan_differences(const Encoder& enc, Route route, int W, std::int64_t budget, std::uint64_t seed) {
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
Scan scan_pairwise(const Encoder& enc, Route route, int W, std::int64_t max_exp, std::uint64_t seed) {
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
  parallel_for(pos.size(), 0, [&](std::size_t a) { R[a] = enc(to_vector(pos[a]), route); });
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

LieCheck check(const GeneratorSet& set, const LieCheckOptions& opt) {
  opt.validate();
  const Encoder enc(set);
  const Route route = enc.resolve(opt.route);

  const auto& B = enc.acting();
  const int n = enc.dim(), N = enc.axes();
  LieCheck c;
  c.dim = n;
  c.axes = N;
  c.window = opt.window;
  c.masa_bound = n / 2;
  c.route = route == Route::closed_form ? "closed-form torus" : "matrix exponential";

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

  double sum_2 = 0;
  for (const auto& b : B) sum_2 += spectral_norm(b);
  c.window_scale = (opt.window - 1) * sum_2;
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
  });
  for (double d : defect) keep_max(c.relativity_defect, d);
  c.pairs_checked = opt.pairs;

  c.skew = c.skew_defect <= c.skew_tolerance;
  c.commuting = c.max_commutator <= c.commutator_tolerance;
  c.independent = c.rank == N;
  c.within_masa_bound = N <= c.masa_bound;
  c.relativity = c.relativity_defect <= c.relativity_tolerance;

  const Scan s = c.skew && c.commuting
                     ? scan_differences(enc, route, W, route == Route::closed_form ? opt.max_differences : opt.max_exp,
                                        opt.seed ^ 0xD1FFull)
                     : scan_pairwise(enc, route, W, opt.max_exp, opt.seed ^ 0x9A12ull);
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
