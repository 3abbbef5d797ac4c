// jordan_positionwise.hpp: Proposition 1 of the Jordan-RoPE paper (q~ . k~ = q^T G(i - j) k) for the
// exact blocks against an independent route (Eigen's matrix exponential), the stabilized block's defect
// against its closed form, the centred factorization, the dynamic range and the float32 path.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/core/error.hpp"
#include "ropekit/lie/jordan_positionwise.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::test_seed;
using ropekit::test::z_bound;

namespace {
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kU32 = 0x1.0p-24;  // float32 unit roundoff


double max_abs(const Eigen::MatrixXd& M) { return M.cwiseAbs().maxCoeff(); }

PositionwiseParams params(int m, double omega = 1.0) {
  PositionwiseParams p;
  p.m = m;
  p.omega = omega;
  return p;  // c = 1, eta = 0.1, L = 1024, gamma = c/L
}
}  // namespace

TEST_CASE("Prop 1: q~ . k~ = q^T G(i - j) k for raw and scaled-exact blocks, to rounding, at random positions") {
  const std::uint64_t seed = test_seed(20240611);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> position(0, 8191);
  std::normal_distribution<double> normal;
  for (int m = 1; m <= 4; ++m)
    for (JordanVariant v : {JordanVariant::raw, JordanVariant::scaled})
      for (double omega : {1.0, 0.37}) {
        const PositionwiseParams p = params(m, omega);
        const Eigen::MatrixXd J = jordan_generator(variant_block(p, v));
        for (int trial = 0; trial < 12; ++trial) {
          int i = position(rng), j = position(rng);
          if (j > i) std::swap(i, j);
          if (trial == 0) i = 8191, j = 8191;  // lag 0 at the far end: the largest cancellation
          Eigen::VectorXd q(2 * m), k(2 * m);
          for (int c = 0; c < 2 * m; ++c) q[c] = normal(rng), k[c] = normal(rng);
          CAPTURE(m);
          CAPTURE(to_string(v));
          CAPTURE(omega);
          CAPTURE(i);
          CAPTURE(j);
          const Eigen::VectorXd qt = query_factor(p, v, i) * q, kt = key_factor(p, v, j) * k;
          const double score = qt.dot(kt);
          const Eigen::MatrixXd G = (static_cast<double>(i - j) * J).exp();  // independent route
          const double reference = q.dot(G * k);
          // Position-wise: each factor entry within (2 + 2p) eps of exp and the shear powers plus
          // (gamma + |omega|) |t| eps from rounding the arguments; the 2m-term dot product adds 2m eps; all relative
          // to sum |q~_c k~_c|. Reference: scaling and squaring, ~(1 + |d| |J|) eps relative to |q|^T |G| |k|.
          const double terms = qt.cwiseAbs().dot(kt.cwiseAbs());
          const double ref_scale = q.cwiseAbs().dot(G.cwiseAbs() * k.cwiseAbs());
          const double tol = kEps * ((6.0 * m + 4 + 2.0 * (1.0 / 1024 + omega) * (i + j)) * terms +
                                     64.0 * (1.0 + (i - j) * J.norm()) * ref_scale);
          CHECK(std::fabs(score - reference) <= tol);
        }
      }
}

TEST_CASE("the closed-form query factor is the inverse transpose of the key factor") {
  for (JordanVariant v : {JordanVariant::raw, JordanVariant::scaled, JordanVariant::stabilized})
    for (double t : {0.0, 1e-8, -3.5, 700.0, -4095.5, 8191.0}) {
      CAPTURE(to_string(v));
      CAPTURE(t);
      const PositionwiseParams p = params(3, 0.37);
      const Eigen::MatrixXd A = key_factor(p, v, t), AinvT = query_factor(p, v, t);
      // A(t) A(t)^{-1} = I: 2m-term products of entries each within ~(6 + |t|) eps, relative to |A| |A^{-1}|.
      const Eigen::MatrixXd residual = A * AinvT.transpose() - Eigen::MatrixXd::Identity(6, 6);
      const double scale = max_abs(A.cwiseAbs() * AinvT.transpose().cwiseAbs());
      CHECK(max_abs(residual) <= 8.0 * (6.0 + std::fabs(t)) * kEps * scale);
    }
}

TEST_CASE("the stabilized block violates Prop 1 by exactly its shear mismatch eta (tau(i) - tau(j) - tau(i - j))") {
  const PositionwiseParams p = params(2, 0.37);
  const double L = p.train_context, eta = p.eta, gamma = 1.0 / 1024;
  auto tau = [&](double t) { return t / (1.0 + std::fabs(t) / L); };
  for (const auto& ij : std::vector<std::pair<int, int>>{{1, 0}, {1000, 10}, {3000, 2999}, {6000, 3000}, {8191, 0}}) {
    const int i = ij.first, j = ij.second;  // plain variables: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(i);
    CAPTURE(j);
    const Eigen::MatrixXd S = query_factor(p, JordanVariant::stabilized, i).transpose() *
                              key_factor(p, JordanVariant::stabilized, j);
    const Eigen::MatrixXd G = relative_kernel(p, JordanVariant::stabilized, i - j);
    // m = 2: A(i)^{-1} A(j) and G_stab(i - j) share the damped rotation; the shear block (0, 1) differs by
    // e^{-gamma d} eta (tau(i) - tau(j) - tau(i - j)) R(omega d).
    const double d = i - j, mismatch = std::exp(-gamma * d) * eta * (tau(i) - tau(j) - tau(d));
    const Eigen::Matrix2d diff = S.block<2, 2>(0, 2) - G.block<2, 2>(0, 2);
    // Rounding: entries up to max |S| carry ~(8 + (gamma + omega)(i + j)) eps; 1e-11 (1 + max |S|) covers i + j < 2^14.
    const double tol = 1e-11 * (1.0 + max_abs(S));
    CHECK(std::fabs(diff(0, 0) - mismatch * std::cos(0.37 * d)) <= tol);
    CHECK(std::fabs(diff(1, 0) - mismatch * std::sin(0.37 * d)) <= tol);
    CHECK(max_abs(S.block<2, 2>(0, 0) - G.block<2, 2>(0, 0)) <= tol);  // the damped rotation part is exact
  }
  // Over a window the defect is of the order of the scores themselves: at i = W-1, j = W/2 the position-wise
  // shear tau(i) - tau(j) is about 10% of the kernel's tau(i - j) once W >> L.
  PositionwiseOptions o;
  o.window = 4096;
  o.samples = 65;
  const PositionwiseRow r = measure_positionwise(p, JordanVariant::stabilized, Factorization::plain, o);
  CHECK(r.relativity_defect > 0.1);
  CHECK(r.group_law_defect > 0.1);  // tau(s + t) != tau(s) + tau(t)
}

TEST_CASE("exact blocks: the measured relativity defect stays within the rounding bound, plain and centred") {
  PositionwiseOptions o;
  o.samples = 65;
  for (int m : {1, 2, 4})
    for (JordanVariant v : {JordanVariant::raw, JordanVariant::scaled})
      for (Factorization f : {Factorization::plain, Factorization::centred}) {
        CAPTURE(m);
        CAPTURE(to_string(v));
        CAPTURE(to_string(f));
        const PositionwiseRow r = measure_positionwise(params(m, 0.37), v, f, o);
        CHECK(r.relativity_defect <= r.rounding_bound);
        CHECK(r.group_law_defect <= 1e-12);  // an exact group: rounding of 2m-term products of O(1) entries
      }
}

TEST_CASE("the centred factorization gives the same scores with smaller factors") {
  const double c0 = 4095.5;
  for (int m : {2, 3, 4})
    for (JordanVariant v : {JordanVariant::raw, JordanVariant::scaled}) {
      const PositionwiseParams p = params(m);
      CAPTURE(m);
      CAPTURE(to_string(v));
      for (const auto& ij : std::vector<std::pair<int, int>>{{0, 0}, {8191, 0}, {8191, 8191}, {5000, 1234}}) {
        const int i = ij.first, j = ij.second;
        CAPTURE(i);
        CAPTURE(j);
        const Eigen::MatrixXd plain = query_factor(p, v, i).transpose() * key_factor(p, v, j);
        const Eigen::MatrixXd centred = query_factor(p, v, i - c0).transpose() * key_factor(p, v, j - c0);
        // Both are G(i - j) up to rounding relative to their own |A^{-T}|^T |A| (8 m (1 + gamma |t|) eps).
        const double scale = std::max(max_abs(query_factor(p, v, i).cwiseAbs().transpose() * key_factor(p, v, j).cwiseAbs()),
                                      max_abs(query_factor(p, v, i - c0).cwiseAbs().transpose() *
                                              key_factor(p, v, j - c0).cwiseAbs()));
        CHECK(max_abs(plain - centred) <= 16.0 * m * kEps * scale);
      }
      PositionwiseOptions o;
      o.samples = 33;
      const PositionwiseRow pl = measure_positionwise(p, v, Factorization::plain, o);
      const PositionwiseRow ce = measure_positionwise(p, v, Factorization::centred, o);
      CHECK(std::max(ce.max_query_factor, ce.max_key_factor) < std::max(pl.max_query_factor, pl.max_key_factor));
    }
}

TEST_CASE("dynamic range: the scaled-exact key factor at c = 1, L = 1024 reaches e^(8191/1024) (appendix A)") {
  PositionwiseOptions o;
  o.samples = 9;
  const PositionwiseRow r = measure_positionwise(params(2), JordanVariant::scaled, Factorization::plain, o);
  // A(t) = G(-t): entries e^{t/L} R(-t) and e^{t/L} (-0.1 t / L) R(-t); the first dominates (0.1 t/L < 1).
  double expected = 0;
  for (int t = 0; t < 8192; ++t)
    expected = std::max(expected, std::exp(t / 1024.0) * std::max(std::fabs(std::cos(t)), std::fabs(std::sin(t))));
  CHECK(r.max_key_factor == doctest::Approx(expected).epsilon(1e-13));
  CHECK(r.max_query_factor == doctest::Approx(1.0).epsilon(1e-15));  // G(t) at t = 0
}

TEST_CASE("float32: scaled-exact keeps float32 accuracy, raw m = 4 at 8192 loses it, less so centred") {
  PositionwiseOptions o;
  o.samples = 65;
  for (int m : {2, 4}) {
    CAPTURE(m);
    const PositionwiseRow s = measure_positionwise(params(m), JordanVariant::scaled, Factorization::plain, o);
    // omega = 1 and gamma = 2^-10 make t, omega t and gamma t exact in float32: the error is the factors'
    // rounding (a few u32 each) times the cancellation kappa, plus the 2m-term float32 dot product.
    CHECK(s.f32_score_error <= kU32 * (6.0 * m + 4) * s.cancellation);
  }
  const PositionwiseRow raw = measure_positionwise(params(4), JordanVariant::raw, Factorization::plain, o);
  const PositionwiseRow raw_c = measure_positionwise(params(4), JordanVariant::raw, Factorization::centred, o);
  // At i = j = 8191 the score is G(0) = I, but its terms reach (0.1 * 8191)^3 / 3! ~ 9e7 in magnitude:
  // a float32 rounding of 6e-8 of that is ~5, larger than the score itself.
  CHECK(raw.f32_lag_error > 1.0);
  CHECK(raw_c.f32_lag_error < raw.f32_lag_error);
  CHECK(raw_c.f32_score_error < raw.f32_score_error);
}

TEST_CASE("sampled positions: evenly spaced, both ends and the centre, sorted and distinct") {
  const auto pos = sample_positions(10, 4, 4.5);
  CHECK(pos == std::vector<int>{0, 3, 4, 5, 6, 9});
  CHECK(sample_positions(3, 5, std::nullopt) == std::vector<int>{0, 1, 2});
}

TEST_CASE("bad position-wise parameters and options throw InputError naming them") {
  PositionwiseParams p;
  p.m = 0;
  CHECK_THROWS_WITH_AS(p.validate(), doctest::Contains("m = 0"), InputError);
  p = PositionwiseParams{};
  p.eta = NAN;
  CHECK_THROWS_WITH_AS(p.validate(), doctest::Contains("eta = nan"), InputError);
  p = PositionwiseParams{};
  p.c = -1;
  CHECK_THROWS_AS(p.validate(), InputError);
  p = PositionwiseParams{};
  p.gamma = -0.5;
  CHECK_THROWS_AS(p.validate(), InputError);
  PositionwiseOptions o;
  o.window = 1;
  CHECK_THROWS_WITH_AS(measure_positionwise(PositionwiseParams{}, JordanVariant::raw, Factorization::plain, o),
                       doctest::Contains("window = 1"), InputError);
  o = PositionwiseOptions{};
  o.samples = 1;
  CHECK_THROWS_AS(o.validate(), InputError);
  o = PositionwiseOptions{};
  o.center = INFINITY;
  CHECK_THROWS_AS(o.validate(), InputError);
}

TEST_CASE("extreme but finite parameters are refused with the bound that keeps every number finite") {
  // Defaults m = 3, eta = 0.1, omega = 1, L = 1024, W = 8192 (t up to 8191), c0 = 4095.5.
  const Where w = Where::options("ropekit jordan positionwise");
  PositionwiseParams p;
  PositionwiseOptions o;
  // The float32 path multiplies query and key entries, up to e^{gamma 8191} (0.1 * 8191)^2/2! each side:
  // with gamma = c/L = 9/1024 one product already exceeds FLT_MAX = 3.4e38, so c = 9 must be refused.
  const double product = 6 * std::exp(9.0 / 1024 * 8191) * std::pow(819.1 * 819.1 / 2, 2);
  CHECK(product > 3.4028234e38);
  p.c = 9;
  CHECK_THROWS_WITH_AS(check_positionwise_range(p, o, w), doctest::Contains("--c = 9 (must be at most"), InputError);
  p.c = 1e308;  // the case: a NaN table before
  CHECK_THROWS_WITH_AS(check_positionwise_range(p, o, w), doctest::Contains("--c = 1e+308 (must be at most"), InputError);
  // Below the stated bound every number is finite.
  p.c = 7.3;
  CHECK_NOTHROW(check_positionwise_range(p, o, w));
  PositionwiseOptions small = o;
  small.samples = 9;
  for (const auto& row : measure_positionwise_all(p, small)) {
    CHECK(std::isfinite(row.max_key_factor));
    CHECK(std::isfinite(row.cancellation));
    CHECK(std::isfinite(row.f32_score_error));
    CHECK(std::isfinite(row.rounding_bound));
  }
  // omega: the float32 phase omega t, t < 8191, must be a float32 (bound FLT_MAX / 2 / 8191 = 2.077e34).
  p = PositionwiseParams{};
  p.omega = 1e308;
  try {
    check_positionwise_range(p, o, w, {"omega"});
    FAIL("accepted");
  } catch (const InputError& e) {
    const std::string m = e.what();
    const double limit = std::stod(m.substr(m.find("at most ") + 8));
    CHECK(limit == doctest::Approx(3.4028234e38 / 2 / 8191).epsilon(1e-6));  // bisection to ~1e-7
  }
  p = PositionwiseParams{};
  p.gamma = 1e308;
  CHECK_THROWS_WITH_AS(check_positionwise_range(p, o, w, {"gamma", "c"}), doctest::Contains("--gamma = 1e+308"),
                       InputError);
  p = PositionwiseParams{};
  p.eta = 1e308;
  CHECK_THROWS_WITH_AS(check_positionwise_range(p, o, w), doctest::Contains("--eta = 1e+308"), InputError);
  // A window so long that e^{(1/1024) t} overflows float32 with the default c = 1: t < 16777215.
  o.window = 1 << 24;
  CHECK_THROWS_WITH_AS(check_positionwise_range(PositionwiseParams{}, o, w, {"window"}),
                       doctest::Contains("--window = 16777216 (must be at most"), InputError);
  // The library refuses on its own too (never a NaN row).
  PositionwiseParams huge;
  huge.c = 1e308;
  CHECK_THROWS_AS(measure_positionwise_all(huge, small), InputError);
}

TEST_CASE("the cost estimate grows with the sampled pairs and m") {
  PositionwiseOptions o;
  const Cost base = positionwise_cost(PositionwiseParams{}, o);
  o.samples = 4097;
  PositionwiseParams p;
  p.m = 32;
  const Cost big = positionwise_cost(p, o);
  CHECK(big.seconds > 100 * base.seconds);
  CHECK(!big.fits());  // 8.4e6 pairs of 64 x 64 products, six times: hours
}

TEST_CASE("float32 path: each score is float32 products summed in index order, without FMA (issue 32 item 6)") {
  // Raw m = 3, window 64, 9 samples (+ the centre): positions 0, 8, 16, 24, 31, 32, 39, 47, 55, 63. By hand, as a
  // float32 model computes it: G32(t) blocks (r, c >= r) = coef_{c-r} R(t), coef_0 = expf(-gamma t), coef_q =
  // coef_{q-1} (eta t) / q, R from cosf / sinf, every product rounded to float; S32(i, j) = G32(t_i) G32(-t_j) with
  // each entry summed over k = 0..5 in order in float (no FMA: the tests build without contraction). Reference:
  // the library's float64 kernels multiplied in double. Eigen's float product (the code before) summed in another
  // order with FMAs: 2.28e-7 here in an AVX-512 build, 2.80e-7 in order.
  PositionwiseParams p;
  p.m = 3;
  PositionwiseOptions o;
  o.window = 64;
  o.samples = 9;
  const PositionwiseRow row = measure_positionwise(p, JordanVariant::raw, Factorization::plain, o);
  const float gamma = static_cast<float>(1.0 / 1024), eta = 0.1f;
  const auto G32 = [&](float t) {
    Eigen::MatrixXf G = Eigen::MatrixXf::Zero(6, 6);
    float coef[3];
    coef[0] = std::exp(-gamma * t);
    for (int q = 1; q < 3; ++q) coef[q] = coef[q - 1] * (eta * t) / static_cast<float>(q);
    const float c = std::cos(t), s = std::sin(t);
    for (int r = 0; r < 3; ++r)
      for (int col = r; col < 3; ++col) {
        const float k = coef[col - r];
        G(2 * r, 2 * col) = k * c;
        G(2 * r, 2 * col + 1) = k * -s;
        G(2 * r + 1, 2 * col) = k * s;
        G(2 * r + 1, 2 * col + 1) = k * c;
      }
    return G;
  };
  const std::vector<int> pos = {0, 8, 16, 24, 31, 32, 39, 47, 55, 63};
  double err = 0, top = 0;
  for (std::size_t a = 0; a < pos.size(); ++a) {
    for (std::size_t b = 0; b <= a; ++b) {
      const Eigen::MatrixXf A = G32(static_cast<float>(pos[a])), K = G32(-static_cast<float>(pos[b]));
      const Eigen::MatrixXd A64 = relative_kernel(p, JordanVariant::raw, pos[a]);
      const Eigen::MatrixXd K64 = relative_kernel(p, JordanVariant::raw, -pos[b]);
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) {
          float s32 = 0;
          double s64 = 0;
          for (int k = 0; k < 6; ++k) {
            const float term = A(r, k) * K(k, c);
            s32 = s32 + term;
            s64 = s64 + A64(r, k) * K64(k, c);
          }
          err = std::max(err, std::abs(static_cast<double>(s32) - s64));
          top = std::max(top, std::abs(s64));
        }
    }
  }
  CHECK(row.f32_score_error == doctest::Approx(err / top).epsilon(1e-9));
}
