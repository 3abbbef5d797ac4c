// lie.hpp: generator families, orthogonal mixing, R(x) by two routes, the induced kernel and the checks
// of spec nd-rope.md section 1.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/core/error.hpp"
#include "ropekit/lie/lie.hpp"

using namespace ropekit;

namespace {
constexpr double kEps = std::numeric_limits<double>::epsilon();

Eigen::Matrix2d rot(double a) {
  Eigen::Matrix2d R;
  R << std::cos(a), -std::sin(a), std::sin(a), std::cos(a);
  return R;
}

// The relativity bound, recomputed here from the frequencies: 32 n eps (1 + (W-1) sum_i max_b |w_ib|)
// (for an orthogonally mixed torus |B_i|_2 = max_b |w_ib|).
double relativity_bound(const Eigen::MatrixXd& W, int window) {
  const double n = 2.0 * W.cols();
  return 32.0 * n * kEps * (1.0 + (window - 1) * W.cwiseAbs().rowwise().maxCoeff().sum());
}

LieCheckOptions small_window(int window) {
  LieCheckOptions o;
  o.window = window;
  o.pairs = 64;
  return o;
}
}  // namespace

TEST_CASE("axial frequencies: contiguous plane groups per axis, 1-D RoPE inside each") {
  const Eigen::MatrixXd W = torus_frequencies(gen::Axial{12, 2, 100.0});  // 6 planes: 3 per axis
  REQUIRE(W.rows() == 2);
  REQUIRE(W.cols() == 6);
  for (int k = 0; k < 3; ++k) {
    CHECK(W(0, k) == doctest::Approx(std::pow(100.0, -k / 3.0)).epsilon(1e-15));
    CHECK(W(1, 3 + k) == doctest::Approx(std::pow(100.0, -k / 3.0)).epsilon(1e-15));
    CHECK(W(1, k) == 0.0);
    CHECK(W(0, 3 + k) == 0.0);
  }
  // 7 planes over 3 axes: 3, 2, 2.
  const Eigen::MatrixXd U = torus_frequencies(gen::Axial{14, 3, 1e4});
  CHECK((U.array() != 0).rowwise().count()(0) == 3);
  CHECK((U.array() != 0).rowwise().count()(1) == 2);
}

TEST_CASE("mixed RoPE: each plane's frequency vector is a magnitude times a unit direction (Heo et al.)") {
  const Eigen::MatrixXd W = torus_frequencies(gen::Mixed{16, 2, 10.0, 7});
  const Eigen::MatrixXd A = torus_frequencies(gen::Axial{16, 2, 10.0});
  for (int b = 0; b < 8; ++b) {
    CAPTURE(b);
    // |theta_b| equals the axial magnitude of the same plane; the two groups are orthogonal directions.
    CHECK(W.col(b).norm() == doctest::Approx(A.col(b).norm()).epsilon(1e-14));
  }
  CHECK(std::fabs(W.col(0).normalized().dot(W.col(4).normalized())) <= 1e-15);
  CHECK(W(1, 0) != 0.0);  // a mixed plane sees both axes
}

TEST_CASE("commuting generators: relativity defect at the level of rounding, reversibility holds") {
  const std::vector<std::pair<std::string, GeneratorFamily>> families = {
      {"axial 2-D", gen::Axial{16, 2, 1e4}},
      {"axial 3-D", gen::Axial{12, 3, 100.0}},
      {"mixed", gen::Mixed{16, 2, 1e4, 3}},
      {"torus", gen::Torus{random_torus_frequencies(2, 8, 1e3, 5)}},
  };
  for (const auto& [name, family] : families)
    for (Route route : {Route::closed_form, Route::matrix_exp}) {
      const auto name_ = name;  // a copy: CAPTURE's lambda cannot take a structured binding (clang 14)
      CAPTURE(name_);
      CAPTURE(static_cast<int>(route));
      LieCheckOptions o = small_window(8);  // (15^3 - 1)/2 differences: exhaustive within the exp budget
      o.route = route;
      const LieCheck c = check(generators(family), o);
      CHECK(c.skew);
      CHECK(c.commuting);
      CHECK(c.independent);
      CHECK(c.within_masa_bound);
      CHECK(c.relativity_defect <= relativity_bound(torus_frequencies(family), o.window));
      CHECK(c.relativity);
      CHECK(c.reversibility);
      CHECK(c.distances_exhaustive);
    }
}

TEST_CASE("LieRE-style dense random generators: relativity defect far above the rounding bound") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const LieCheck c = check(generators(gen::Random{8, 2, 1.0, seed}), small_window(8));
    CHECK(c.skew);
    CHECK_FALSE(c.commuting);
    CHECK(c.independent);
    CHECK_FALSE(c.relativity);
    // Two random skew matrices of spectral norm ~2 do not commute at O(1); over positions up to 7 the
    // defect |R(x1)^T R(x2) - R(x2 - x1)| is O(1), ten orders above the ~1e-12 rounding tolerance.
    CHECK(c.relativity_defect > 1e-2);
    CHECK(c.relativity_defect > 1e9 * c.relativity_tolerance);
  }
}

TEST_CASE("proportional generators: rank deficiency found and reversibility failing") {
  Eigen::MatrixXd W(2, 4);
  W.row(0) << 1.0, 0.1, 0.01, 0.001;
  W.row(1) = 2.0 * W.row(0);  // B_1 = 2 B_0: positions (x + 2, y - 1) and (x, y) collide
  const LieCheck c = check(generators(gen::Torus{W}), small_window(8));
  CHECK(c.commuting);
  CHECK(c.relativity);
  CHECK(c.rank == 1);
  CHECK_FALSE(c.independent);
  CHECK_FALSE(c.reversibility);
  CHECK(c.min_position_distance <= c.relativity_tolerance);
  // The collision found is a multiple of the null direction (2, -1).
  REQUIRE(c.closest_x.size() == 2);
  const double dx = c.closest_y[0] - c.closest_x[0], dy = c.closest_y[1] - c.closest_x[1];
  CHECK(dx + 2 * dy == 0.0);
  CHECK(dx != 0.0);
}

TEST_CASE("more commuting generators than floor(n/2) cannot be independent") {
  const LieCheck c = check(generators(gen::Torus{random_torus_frequencies(5, 8, 1e4, 2)}), small_window(4));
  CHECK(c.commuting);
  CHECK_FALSE(c.within_masa_bound);
  CHECK(c.rank == 4);
  CHECK_FALSE(c.independent);
  CHECK_FALSE(c.reversibility);
}

TEST_CASE("commensurate frequencies collide inside the window") {
  Eigen::MatrixXd W(1, 2);
  W << 2 * std::numbers::pi / 8, 2 * std::numbers::pi / 4;  // R(x + 8) = R(x)
  const LieCheck c = check(generators(gen::Torus{W}), small_window(12));
  CHECK(c.independent);
  CHECK_FALSE(c.reversibility);
  CHECK(c.closest_y[0] - c.closest_x[0] == 8.0);
  CHECK(check(generators(gen::Torus{W}), small_window(8)).reversibility);  // a window shorter than the period
}

TEST_CASE("Q from each parameterization is orthogonal with determinant 1") {
  for (int n : {1, 2, 5, 16, 40})
    for (MixingKind kind : {MixingKind::cayley, MixingKind::exp, MixingKind::givens}) {
      CAPTURE(n);
      CAPTURE(to_string(kind));
      const Eigen::MatrixXd Q = orthogonal(random_mixing(kind, n, 11));
      // One solve / exp / n(n-1)/2 rotations: ~n eps per entry, 16 n eps in Frobenius norm with room.
      CHECK((Q.transpose() * Q - Eigen::MatrixXd::Identity(n, n)).norm() <= 16.0 * n * kEps);
      CHECK(Q.determinant() == doctest::Approx(1.0).epsilon(16.0 * n * kEps));
    }
}

TEST_CASE("the stated conventions: Cayley (I - S)(I + S)^-1, exp(S), Givens order") {
  Eigen::MatrixXd S(2, 2);
  const double a = 0.7;
  S << 0, -a, a, 0;  // a J, eigenvalues +- i a
  // (1 - i a) / (1 + i a) = e^{-2 i atan a}: a rotation by -2 atan(a).
  CHECK((orthogonal(mix::Cayley{S}) - rot(-2 * std::atan(a))).norm() <= 4 * kEps);
  // The other convention (I + S/2)(I - S/2)^-1 is this map at -S/2: a rotation by 2 atan(a/2).
  CHECK((orthogonal(mix::Cayley{-S / 2}) - rot(2 * std::atan(a / 2))).norm() <= 4 * kEps);
  CHECK((orthogonal(mix::Exp{S}) - rot(a)).norm() <= 4 * kEps);
  CHECK((orthogonal(mix::Givens{2, {a}}) - rot(a)).norm() == 0.0);
  // n = 3: Q = G(0,1,a0) G(0,2,a1) G(1,2,a2).
  auto G = [](int i, int j, double t) {
    Eigen::Matrix3d M = Eigen::Matrix3d::Identity();
    M(i, i) = std::cos(t), M(i, j) = -std::sin(t), M(j, i) = std::sin(t), M(j, j) = std::cos(t);
    return M;
  };
  const Eigen::Matrix3d expected = G(0, 1, 0.1) * G(0, 2, -1.2) * G(1, 2, 2.3);
  CHECK((orthogonal(mix::Givens{3, {0.1, -1.2, 2.3}}) - Eigen::MatrixXd(expected)).norm() <= 8 * kEps);
}

TEST_CASE("orthogonal mixing preserves commutation, relativity and the encodings' distances") {
  const GeneratorSet axial = generators(gen::Axial{12, 2, 100.0});
  const LieCheck plain = check(axial, small_window(10));
  for (MixingKind kind : {MixingKind::cayley, MixingKind::exp, MixingKind::givens}) {
    CAPTURE(to_string(kind));
    GeneratorSet mixed = axial;
    mixed.mixing = orthogonal(random_mixing(kind, 12, 4));
    const LieCheck c = check(mixed, small_window(10));
    CHECK(c.max_commutator > 0.0);  // B_i' = Q T_i Q^T are dense now, computed with rounding
    CHECK(c.commuting);
    CHECK(c.skew);
    CHECK(c.orthogonal);
    CHECK(c.relativity);
    CHECK(c.reversibility);
    // |Q (E(x) - E(y)) Q^T|_F = |E(x) - E(y)|_F: the same smallest distance, to rounding.
    CHECK(c.min_position_distance == doctest::Approx(plain.min_position_distance).epsilon(1e-12));
  }
}

TEST_CASE("a non-orthogonal Q keeps the generators skew but breaks commutation and relativity") {
  GeneratorSet s = generators(gen::Axial{8, 2, 10.0});
  Eigen::MatrixXd Q = Eigen::MatrixXd::Identity(8, 8);
  Q(0, 4) = 0.3;
  Q(5, 1) = -0.2;
  s.mixing = Q;
  const LieCheck c = check(s, small_window(6));
  CHECK(c.skew);
  CHECK_FALSE(c.orthogonal);
  CHECK_FALSE(c.commuting);
  CHECK_FALSE(c.relativity);
  CHECK(c.route == "matrix exponential");  // the closed form needs an orthogonal Q
}

TEST_CASE("R(x): closed-form torus equals Eigen's matrix exponential near zero, at tiny and at random positions") {
  GeneratorSet s = generators(gen::Mixed{10, 3, 50.0, 2});
  s.mixing = orthogonal(random_mixing(MixingKind::givens, 10, 9));
  const Encoder enc(s);
  REQUIRE(enc.has_closed_form());
  std::vector<Eigen::VectorXd> xs = {Eigen::VectorXd::Zero(3), Eigen::VectorXd::Constant(3, 1e-8)};
  Eigen::VectorXd x(3);
  x << 1e-8, -2e-8, 0;
  xs.push_back(x);
  for (int k = 0; k < 5; ++k) xs.push_back(20.0 * Eigen::VectorXd::Random(3));
  for (const auto& p : xs) {
    CAPTURE(p.transpose());
    const Eigen::MatrixXd a = enc(p, Route::closed_form), b = enc(p, Route::matrix_exp);
    // Phases up to ~60 (eps each) and an orthogonal 10 x 10 change of basis: 64 n eps (1 + |x|_1).
    CHECK((a - b).norm() <= 64.0 * 10 * kEps * (1.0 + p.cwiseAbs().sum()));
    CHECK((a.transpose() * a - Eigen::MatrixXd::Identity(10, 10)).norm() <= 64.0 * 10 * kEps);
    CHECK(enc.kernel(p, Route::closed_form) ==
          doctest::Approx(enc.kernel(p, Route::matrix_exp)).epsilon(64.0 * kEps * (1.0 + p.cwiseAbs().sum())));
  }
}

TEST_CASE("induced kernel: Phi(0) = 1, |Phi| <= 1, Phi(-dx) = Phi(dx), (2/n) sum_b cos(w_b . dx) on the torus") {
  const Eigen::MatrixXd W = torus_frequencies(gen::Axial{8, 2, 10.0});
  const GeneratorSet s = generators(gen::Axial{8, 2, 10.0});
  Eigen::MatrixXd dx(5, 2);
  dx << 0, 0, 1, 0, 0, 3, -2, 5, 2, -5;
  const Eigen::VectorXd phi = induced_kernel(s, dx);
  CHECK(phi[0] == 1.0);
  for (int r = 0; r < dx.rows(); ++r) {
    double expected = 0;
    for (int b = 0; b < 4; ++b) expected += std::cos(W(0, b) * dx(r, 0) + W(1, b) * dx(r, 1));
    expected *= 2.0 / 8;
    CHECK(phi[r] == doctest::Approx(expected).epsilon(1e-15));
    CHECK(std::fabs(phi[r]) <= 1.0);
  }
  CHECK(phi[3] == doctest::Approx(phi[4]).epsilon(1e-15));
  CHECK(induced_kernel(s, dx, Route::matrix_exp)[1] == doctest::Approx(phi[1]).epsilon(1e-14));
}

TEST_CASE("the torus is detected only from an exact block pattern") {
  std::vector<Eigen::MatrixXd> T = torus_generators(torus_frequencies(gen::Axial{8, 2, 10.0}));
  CHECK(detect_torus(T).has_value());
  T[1](0, 5) = 1e-300;  // one off-block entry
  CHECK_FALSE(detect_torus(T).has_value());
  GeneratorSet s;
  s.dim = 8;
  s.base = T;
  const Encoder enc(s);
  CHECK_FALSE(enc.has_closed_form());
  CHECK_THROWS_AS(enc(Eigen::VectorXd::Zero(2), Route::closed_form), InputError);
}

TEST_CASE("bad generator parameters and check options throw InputError naming them") {
  CHECK_THROWS_WITH_AS(generators(gen::Axial{7, 2, 1e4}), doctest::Contains("dim = 7"), InputError);
  CHECK_THROWS_WITH_AS(generators(gen::Axial{8, 5, 1e4}), doctest::Contains("axes = 5"), InputError);
  CHECK_THROWS_WITH_AS(generators(gen::Mixed{8, 2, -1.0, 1}), doctest::Contains("base = -1"), InputError);
  CHECK_THROWS_AS(generators(gen::Axial{8, 0, 1e4}), InputError);
  CHECK_THROWS_WITH_AS(random_torus_frequencies(1, 5, 10.0, 1), doctest::Contains("dim = 5"), InputError);
  Eigen::MatrixXd W(1, 2);
  W << 1.0, NAN;
  CHECK_THROWS_WITH_AS(generators(gen::Torus{W}), doctest::Contains("nan"), InputError);
  CHECK_THROWS_AS(generators(gen::Random{8, 2, 0.0, 1}), InputError);
  CHECK_THROWS_AS(generators(gen::User{{Eigen::MatrixXd::Zero(3, 4)}}), InputError);
  CHECK_THROWS_AS(generators(gen::User{{Eigen::MatrixXd::Zero(3, 3), Eigen::MatrixXd::Zero(4, 4)}}), InputError);
  Eigen::MatrixXd S = Eigen::MatrixXd::Ones(3, 3);
  CHECK_THROWS_WITH_AS(orthogonal(mix::Cayley{S}), doctest::Contains("skew"), InputError);
  CHECK_THROWS_AS(orthogonal(mix::Givens{3, {0.1, 0.2}}), InputError);
  LieCheckOptions o;
  o.window = 1;
  CHECK_THROWS_WITH_AS(check(generators(gen::Axial{8, 2, 10.0}), o), doctest::Contains("window = 1"), InputError);
}

TEST_CASE("generators too large to resolve are refused, with the derived scale 1/(16 sqrt(n) eps)") {
  CHECK(max_position_scale(8) == doctest::Approx(1.0 / (16 * std::sqrt(8.0) * kEps)).epsilon(1e-15));
  // A torus with one frequency 1e308 (the generator file): NaN tables before.
  Eigen::MatrixXd W(1, 2);
  W << 1e308, 1;
  const GeneratorSet big = generators(gen::Torus{W});
  LieCheckOptions o;
  o.window = 8;
  CHECK_THROWS_WITH_AS(check(big, o, Where::options("ropekit lie check")),
                       doctest::Contains("generators = sum_i |B_i|_2 = 1e+308"), InputError);
  CHECK_THROWS_WITH_AS(induced_kernel(big, Eigen::MatrixXd::Ones(1, 1), Route::automatic, Where::options("ropekit lie kernel")),
                       doctest::Contains("ropekit lie kernel: --offsets = 1"), InputError);
  // Frequency 1e12 on n = 4: s = (W - 1) 1e12 may reach 1/(16 * 2 * eps) = 1.4e14, so W - 1 <= 140.
  W << 1e12, 1;
  const GeneratorSet fast = generators(gen::Torus{W});
  o.window = 1000;
  CHECK_THROWS_WITH_AS(check(fast, o, Where::options("ropekit lie check")),
                       doctest::Contains("--window = 1000 (must be at most 141"), InputError);
  o.window = 100;
  o.pairs = 8;
  CHECK_NOTHROW(check(fast, o));
  // Offsets within the scale: Phi = (2/n) sum_b cos(w_b dx), here with w = (1, 1e12)... at dx = 1e2.
  const Eigen::VectorXd phi = induced_kernel(fast, Eigen::MatrixXd::Constant(1, 1, 100.0));
  CHECK(phi[0] == doctest::Approx((std::cos(100.0 * 1e12) + std::cos(100.0)) / 2).epsilon(1e-12));
}

TEST_CASE("a mixing Q whose products would overflow is refused; work beyond the budget is refused naming --pairs") {
  GeneratorSet set = generators(gen::Axial{8, 2, 1e4});
  set.mixing = Eigen::MatrixXd::Identity(8, 8) * 1e160;
  CHECK_THROWS_WITH_AS(check(set, LieCheckOptions{}, Where::options("ropekit lie check")),
                       doctest::Contains("ropekit lie check: Q = a matrix with |Q|_F = "), InputError);
  set.mixing = Eigen::MatrixXd::Identity(8, 8) * 1e50;  // |Q|_F fine, but det Q = 1e400
  CHECK_THROWS_WITH_AS(check(set, LieCheckOptions{}), doctest::Contains("prod_j |Q e_j|_2 = 10^400"), InputError);
  // Dense n = 512 by matrix exponentials: each R(x) ~ 2 n^3 (10 + squarings) flops; 2^20 relativity pairs are
  // about 1e18 flops, far beyond two hours at any rate.
  const GeneratorSet dense = generators(gen::Random{512, 2, 1.0, 1});
  LieCheckOptions o;
  o.pairs = 1 << 20;
  CHECK(!lie_check_cost(dense, o).fits());
  CHECK_THROWS_WITH_AS(check_lie_inputs(dense, o, Where::options("ropekit lie check")),
                       doctest::Contains("ropekit lie check: --pairs = 1048576 (must be at most"), InputError);
  o.pairs = 256;
  CHECK(lie_check_cost(dense, o).seconds > kNoticeSeconds);  // announced, about 3.5e12 flops
}

TEST_CASE("check() reports progress: fractions in [0, 1], never decreasing") {
  const GeneratorSet set = generators(gen::Random{16, 2, 1.0, 3});
  LieCheckOptions o;
  o.window = 6;
  o.pairs = 32;
  std::vector<double> seen;
  o.progress = [&](double f) { seen.push_back(f); };
  check(set, o);
  REQUIRE(!seen.empty());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i] >= 0);
    CHECK(seen[i] <= 1);
    if (i) CHECK(seen[i] >= seen[i - 1]);
  }
}

TEST_CASE("non-skew generators whose exponential leaves float64 are refused, not printed as NaN") {
  // Found by the generator fuzzer: a set with a symmetric part of 1e10 passes the phase bound (it is far below
  // 1/(16 sqrt(n) eps)), but exp(x B) grows like e^{x |B + B^T|/2}: at x = 0.5 that is e^{5e9}, beyond float64.
  // The kernel and the check printed nan; both now refuse, naming the offset or the window.
  GeneratorSet s;
  s.dim = 2;
  s.base = {(Eigen::MatrixXd(2, 2) << 1e10, 0, 0, 0).finished()};
  Eigen::MatrixXd offsets(2, 1);
  offsets << 0.0, 1e-12;  // e^{1e-2}: finite, and a value that can be checked: tr exp / n = (e^{0.01} + 1)/2
  const Eigen::VectorXd phi = induced_kernel(s, offsets, Route::matrix_exp);
  CHECK(phi[0] == 1.0);
  CHECK(phi[1] == doctest::Approx((std::exp(0.01) + 1) / 2).epsilon(1e-12));
  offsets(1, 0) = 0.5;
  CHECK_THROWS_AS(induced_kernel(s, offsets, Route::matrix_exp), InputError);
  LieCheckOptions o;
  o.window = 4;
  CHECK_THROWS_WITH_AS(check(s, o), doctest::Contains("not skew"), InputError);
}
