// Feature columns: counts for every method, and the Jordan columns tied to the operator they come
// from, the realified matrix exponential exp(d J_m) (Jordan-RoPE paper section 3.3), computed here
// by Eigen's MatrixFunctions, independently of ropekit's closed forms.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/encodings/basis.hpp"
#include "ropekit/core/error.hpp"

using namespace ropekit;

namespace {

BasisParams paper_params() {
  BasisParams p;  // the paper's Table 3 run
  p.num_freqs = 16;
  p.head_dim = 64;
  p.base = 1e4;
  p.gamma = 1e-4;
  p.train_context = 1024;
  p.bounded_tau = true;
  return p;
}

// Realified generator pieces for one frequency and order m (2m x 2m):
// D = I_m (x) [[-gamma, -w], [w, -gamma]],  N = nilpotent shift (superdiagonal 2x2 identity blocks).
Eigen::MatrixXd rotation_part(int m, double gamma, double w) {
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(2 * m, 2 * m);
  for (int b = 0; b < m; ++b) D.block(2 * b, 2 * b, 2, 2) << -gamma, -w, w, -gamma;
  return D;
}
Eigen::MatrixXd nilpotent_part(int m) {
  Eigen::MatrixXd N = Eigen::MatrixXd::Zero(2 * m, 2 * m);
  for (int b = 0; b + 1 < m; ++b) N.block(2 * b, 2 * (b + 1), 2, 2).setIdentity();
  return N;
}

// Feature columns of an order-m chain at one lag, gathered as column (q, cos|sin, k).
double chain_entry(const Eigen::MatrixXd& X, Eigen::Index row, int F, int q, bool sine, int k) {
  return X(row, 1 + q * 2 * F + (sine ? F : 0) + k);
}

const std::vector<double> kLags = {0, 1, 2, 7, 100, 1023, 1024, 4095, 8191};

}  // namespace

TEST_CASE("column counts follow spec section 2 for every method") {
  const BasisParams p = paper_params();
  const int F = p.num_freqs;
  struct Case {
    const char* name;
    int count;
  };
  // Counts written from the spec's table, for F = 16.
  for (const auto& c : {Case{"nope", 1}, Case{"rope", 1 + 2 * F}, Case{"rope_matched_m2", 1 + 2 * 8},
                        Case{"rope_matched_m3", 1 + 2 * 5}, Case{"rope_matched_m4", 1 + 2 * 4},
                        Case{"rope_matched_m32", 1 + 2 * 1}, Case{"alibi", 2}, Case{"rope_alibi", 2 + 2 * F},
                        Case{"damped_rope", 1 + 2 * F}, Case{"real_jordan", 3}, Case{"direct_sum", 4 + 2 * F},
                        Case{"direct_sum_poly_m4", 2 * F + 4}, Case{"direct_sum_poly_m6", 2 * F + 6},
                        Case{"jordan_rope", 1 + 4 * F}, Case{"jordan_no_gamma", 1 + 4 * F},
                        Case{"jordan_raw_tau", 1 + 4 * F}, Case{"jordan_exact_c010", 1 + 4 * F},
                        Case{"jordan_m3", 1 + 6 * F}, Case{"jordan_m4", 1 + 8 * F},
                        Case{"jordan_scaled_m3_c010", 1 + 6 * F}, Case{"jordan_scaled_m4_c010", 1 + 8 * F},
                        Case{"jordan:m=5", 1 + 10 * F}}) {
    CAPTURE(c.name);
    const Method m = parse_method(c.name);
    CHECK(n_features(m, p) == c.count);
    const Eigen::MatrixXd X = features(m, p, Eigen::VectorXd::LinSpaced(5, 0, 4));
    CHECK(X.rows() == 5);
    CHECK(X.cols() == c.count);
    CHECK(static_cast<int>(feature_names(m, p).size()) == c.count);
  }
}

TEST_CASE("RoPE columns are cos and sin of the grid omega_k = theta^(-2k/h) - h not 2F") {
  BasisParams p = paper_params();
  const Eigen::VectorXd lags = Eigen::Map<const Eigen::VectorXd>(kLags.data(), kLags.size());
  const Eigen::MatrixXd X = features(parse_method("rope"), p, lags);
  for (Eigen::Index i = 0; i < lags.size(); ++i)
    for (int k = 0; k < p.num_freqs; ++k) {
      const double w = std::pow(1e4, -2.0 * k / 64);  // h = 64 with F = 16: the upper half of RoPE's grid
      CAPTURE(lags[i]);
      CAPTURE(k);
      // SLEEF's sincos is within 1 ulp; arguments up to 8191 rad: |error| <= ~2e-16.
      CHECK(X(i, 0) == 1.0);
      CHECK(std::fabs(X(i, 1 + k) - std::cos(w * lags[i])) <= 4e-16);
      CHECK(std::fabs(X(i, 1 + p.num_freqs + k) - std::sin(w * lags[i])) <= 4e-16);
    }
}

TEST_CASE("scaled-exact Jordan columns equal the first block row of exp(d J_m)") {
  // J_m = D + eta N with gamma = c/L, eta = 1/L: block (0, q) = e^{-gamma d} (eta d)^q/q! R(w d).
  BasisParams p = paper_params();
  p.num_freqs = 4;  // four frequencies suffice to cover the grid's range here
  p.head_dim = 8;
  const double L = p.train_context;
  const Eigen::VectorXd lags = Eigen::Map<const Eigen::VectorXd>(kLags.data(), kLags.size());
  for (int m : {1, 2, 3, 4}) {
    for (double c : {0.0, 0.1, 1.0}) {
      const Eigen::MatrixXd X = features(method::JordanScaled{m, c}, p, lags);
      const Eigen::VectorXd w = p.frequencies();
      for (int k = 0; k < p.num_freqs; ++k) {
        const Eigen::MatrixXd J = rotation_part(m, c / L, w[k]) + nilpotent_part(m) / L;
        for (Eigen::Index i = 0; i < lags.size(); ++i) {
          const Eigen::MatrixXd G = (lags[i] * J).exp();
          for (int q = 0; q < m; ++q) {
            CAPTURE(m);
            CAPTURE(c);
            CAPTURE(k);
            CAPTURE(lags[i]);
            CAPTURE(q);
            // Scaling-and-squaring of |d J| up to 8191 loses ~log2(8191) bits: 1e-11 relative to the
            // block's magnitude (x^q/q! <= 8^3/6) is a safe bound.
            const double scale = std::max(1.0, std::pow(lags[i] / L, q));
            CHECK(std::fabs(chain_entry(X, i, p.num_freqs, q, false, k) - G(0, 2 * q)) <= 1e-11 * scale);
            CHECK(std::fabs(chain_entry(X, i, p.num_freqs, q, true, k) - G(1, 2 * q)) <= 1e-11 * scale);
          }
        }
      }
    }
  }
}

TEST_CASE("stabilized Jordan columns equal exp(d D + tau(d)/L N): bounded shear time - same damping") {
  BasisParams p = paper_params();
  p.num_freqs = 3;
  p.head_dim = 6;
  const double L = p.train_context;
  const Eigen::VectorXd lags = Eigen::Map<const Eigen::VectorXd>(kLags.data(), kLags.size());
  const Eigen::VectorXd w = p.frequencies();
  for (int m : {2, 3, 4}) {
    for (bool bounded : {true, false}) {
      const Eigen::MatrixXd X = features(method::Jordan{m, {}, bounded}, p, lags);
      for (int k = 0; k < p.num_freqs; ++k)
        for (Eigen::Index i = 0; i < lags.size(); ++i) {
          const double d = lags[i];
          const double tau = bounded ? d / (1 + d / L) : d;
          // D and N commute, so this is exp(d D) exp(tau N / L).
          const Eigen::MatrixXd G = (d * rotation_part(m, p.gamma, w[k]) + (tau / L) * nilpotent_part(m)).exp();
          for (int q = 0; q < m; ++q) {
            CAPTURE(m);
            CAPTURE(bounded);
            CAPTURE(d);
            // As above: 1e-11 relative to the block's magnitude (tau/L)^q/q! (up to 85 at raw tau, q = 3).
            const double scale = std::max(1.0, std::pow(tau / L, q));
            CHECK(std::fabs(chain_entry(X, i, p.num_freqs, q, false, k) - G(0, 2 * q)) <= 1e-11 * scale);
            CHECK(std::fabs(chain_entry(X, i, p.num_freqs, q, true, k) - G(1, 2 * q)) <= 1e-11 * scale);
          }
        }
    }
  }
}

TEST_CASE("real Jordan and direct-sum distance columns are exp of a real order-2 Jordan block") {
  // exp(d * [[-g, 0], [0, -g]] + tau/L [[0, 1], [0, 0]]) has first row (e^{-g d}, tau/L e^{-g d}).
  const BasisParams p = paper_params();
  const Eigen::VectorXd lags = Eigen::Map<const Eigen::VectorXd>(kLags.data(), kLags.size());
  const Eigen::MatrixXd R = features(parse_method("real_jordan"), p, lags);
  const Eigen::MatrixXd D = features(parse_method("direct_sum"), p, lags);
  for (Eigen::Index i = 0; i < lags.size(); ++i) {
    const double d = lags[i], tau = d / (1 + d / p.train_context);
    Eigen::Matrix2d J;
    J << -p.gamma * d, tau / p.train_context, 0, -p.gamma * d;
    const Eigen::Matrix2d G = J.exp();
    CHECK(R(i, 1) == doctest::Approx(G(0, 0)).epsilon(1e-13));
    CHECK(R(i, 2) == doctest::Approx(G(0, 1)).epsilon(1e-13));
    CHECK(D(i, 1 + 2 * p.num_freqs) == doctest::Approx(d / p.train_context).epsilon(1e-15));  // x
    CHECK(D(i, 2 + 2 * p.num_freqs) == doctest::Approx(G(0, 0)).epsilon(1e-13));
    CHECK(D(i, 3 + 2 * p.num_freqs) == doctest::Approx(G(0, 1)).epsilon(1e-13));
  }
}

TEST_CASE("jordan_scaled_m2_c010 and jordan_exact_c010 are the same basis - jordan_raw_tau is c = gamma L") {
  const BasisParams p = paper_params();
  const Eigen::VectorXd lags = Eigen::VectorXd::LinSpaced(8192, 0, 8191);
  const Eigen::MatrixXd a = features(parse_method("jordan_scaled_m2_c010"), p, lags);
  const Eigen::MatrixXd b = features(parse_method("jordan_exact_c010"), p, lags);
  CHECK((a - b).cwiseAbs().maxCoeff() == 0.0);
  // Exact/raw Jordan = scaled-exact with c = gamma L = 0.1024 (spec rule 2); exp(-gamma d) vs
  // exp(-c d/L) round differently: a few ulps of entries up to 8.
  const Eigen::MatrixXd raw = features(parse_method("jordan_raw_tau"), p, lags);
  const Eigen::MatrixXd c1024 = features(method::JordanScaled{2, 0.1024}, p, lags);
  CHECK((raw - c1024).cwiseAbs().maxCoeff() <= 1e-14);
}

TEST_CASE("row ranges of a long grid equal the same rows of the whole grid") {
  const BasisParams p = paper_params();
  const BasisEvaluator ev(p, Eigen::VectorXd::LinSpaced(3000, 0, 2999));
  for (const char* name : {"direct_sum", "jordan_m4", "jordan_scaled_m3_c010", "direct_sum_poly_m4"}) {
    const Method m = parse_method(name);
    const Eigen::MatrixXd all = ev.features(m);
    CHECK((ev.features(m, 1024, 1000) - all.middleRows(1024, 1000)).cwiseAbs().maxCoeff() == 0.0);
  }
}

TEST_CASE("bad basis parameters and lags throw InputError") {
  auto bad = [](auto mutate) {
    BasisParams p = paper_params();
    mutate(p);
    return p;
  };
  const Eigen::VectorXd lags = Eigen::VectorXd::LinSpaced(4, 0, 3);
  const Method m = parse_method("rope");
  CHECK_THROWS_AS(features(m, bad([](BasisParams& p) { p.head_dim = 63; }), lags), InputError);
  CHECK_THROWS_AS(features(m, bad([](BasisParams& p) { p.head_dim = 0; }), lags), InputError);
  CHECK_THROWS_AS(features(m, bad([](BasisParams& p) { p.num_freqs = 0; }), lags), InputError);
  CHECK_THROWS_AS(features(m, bad([](BasisParams& p) { p.base = std::nan(""); }), lags), InputError);
  CHECK_THROWS_AS(features(m, bad([](BasisParams& p) { p.base = -1; }), lags), InputError);
  CHECK_THROWS_AS(features(m, bad([](BasisParams& p) { p.gamma = -1e-4; }), lags), InputError);
  CHECK_THROWS_AS(features(m, bad([](BasisParams& p) { p.train_context = 0; }), lags), InputError);
  Eigen::VectorXd neg = lags;
  neg[2] = -1;
  CHECK_THROWS_AS(features(m, paper_params(), neg), InputError);
  neg[2] = std::nan("");
  CHECK_THROWS_AS(features(m, paper_params(), neg), InputError);
}

TEST_CASE("where e^{-cx} underflows the chain columns are still e^{-cx} x^p/p! C (regression: they were 0)") {
  // jordan-scaled:m=32,c=1 with L = 1 at lag 800: e^{-800} is below the smallest subnormal, but
  // e^{-800} 800^31 / 31! cos(800) is about 2e-292. Reference in long double through logarithms, independent of
  // the code's running product. Tolerance 1e-12: the code's exponent 671 carries ~671 eps of rounding.
  BasisParams p = paper_params();
  p.num_freqs = 1;
  p.train_context = 1;
  const Method m = method::JordanScaled{32, 1.0};
  const Eigen::MatrixXd X = features(m, p, Eigen::VectorXd::Constant(1, 800.0));
  for (int q : {20, 31}) {
    const long double coef = std::exp(-800.0L + q * std::log(800.0L) - std::lgamma(q + 1.0L));
    const double want_cos = static_cast<double>(coef * std::cos(800.0L));
    const double want_sin = static_cast<double>(coef * std::sin(800.0L));
    CAPTURE(q);
    CHECK(chain_entry(X, 0, 1, q, false, 0) == doctest::Approx(want_cos).epsilon(1e-12));
    CHECK(chain_entry(X, 0, 1, q, true, 0) == doctest::Approx(want_sin).epsilon(1e-12));
  }
  CHECK(X.allFinite());
}

TEST_CASE("lags whose columns leave float64 are found up front, with the largest lag that is safe") {
  BasisParams p = paper_params();
  p.num_freqs = 1;
  // Raw Jordan m = 3, gamma = 0: the largest column is (d/L)^2/2!. Float64 holds it while d <= L sqrt(2 DBL_MAX),
  // about 1.9e157 L; the code keeps a margin of 64 in the value (its running product): the limit is in
  // [L sqrt(2 DBL_MAX)/16, L sqrt(2 DBL_MAX)].
  const Method raw = method::Jordan{3, 0.0, false};
  const double top = p.train_context * std::sqrt(2.0) * std::sqrt(std::numeric_limits<double>::max());
  const auto o = find_lag_overflow(raw, p, Eigen::VectorXd::Constant(1, 1e300));
  REQUIRE(o);
  CHECK(o->lag == 1e300);
  CHECK(o->limit <= top);
  CHECK(o->limit >= top / 16);
  CHECK(features(raw, p, Eigen::VectorXd::Constant(1, o->limit)).allFinite());
  CHECK_THROWS_AS(features(raw, p, Eigen::VectorXd::Constant(1, 1e300)), InputError);
  // The phase omega d: omega_0 = 1, so d must stay below DBL_MAX (2^1023 with margin).
  const auto ph = find_lag_overflow(method::Rope{}, p, Eigen::VectorXd::Constant(1, 1e308));
  REQUIRE(ph);
  CHECK(ph->limit == doctest::Approx(0x1p1023).epsilon(1e-9));
  // Bounded columns never leave float64: stabilized Jordan at the largest finite lag below the phase bound.
  CHECK(!find_lag_overflow(method::Jordan{32, 0.0, true}, p, Eigen::VectorXd::Constant(1, 1e300)));
  // With damping the power is tamed: e^{-1e-4 d} (d/L)^2/2 peaks at d = 2e4, far inside float64.
  CHECK(!find_lag_overflow(method::Jordan{3, 1e-4, false}, p, Eigen::VectorXd::Constant(1, 1e300)));
}

TEST_CASE("num_freqs is bounded so that column counts stay ints, and theta < 1 must keep the top frequency finite") {
  BasisParams p = paper_params();
  p.num_freqs = kMaxNumFreqs + 1;
  CHECK_THROWS_WITH_AS(p.validate(Where::options("ropekit features")),
                       doctest::Contains("--num-freqs = 16777217 (must be an integer in [1, 16777216])"), InputError);
  p.num_freqs = kMaxNumFreqs;
  CHECK(n_features(method::Jordan{32, {}, {}}, p) == 1 + 2 * 32 * kMaxNumFreqs);  // spec count 1 + 2 m F
  // theta^(-2(F-1)/h) with theta = 1e-300, F = 16, h = 2: 1e4500, not a float64.
  p = paper_params();
  p.base = 1e-300;
  p.head_dim = 2;
  CHECK_THROWS_WITH_AS(p.validate(Where::options("ropekit features")), doctest::Contains("--theta = 1e-300"),
                       InputError);
  // features_bytes counts the tables (2F) and the matrix (n_features) per lag: 8 bytes each.
  p = paper_params();
  CHECK(features_bytes(method::Rope{}, p, 10) == 8.0 * 10 * (2 * 16 + 33 + 6));
}

TEST_CASE("a shear rate eta: Jordan columns equal exp(d D + eta tau N), tau = d/(1 + d/L); other methods ignore it") {
  BasisParams p = paper_params();
  p.num_freqs = 3;
  p.head_dim = 6;
  const double eta = 3e-3;
  p.eta = eta;
  const Eigen::VectorXd lags = Eigen::Map<const Eigen::VectorXd>(kLags.data(), kLags.size());
  const Eigen::VectorXd w = p.frequencies();
  for (int m : {2, 3}) {
    for (bool bounded : {true, false}) {
      const Eigen::MatrixXd X = features(method::Jordan{m, {}, bounded}, p, lags);
      for (int k = 0; k < p.num_freqs; ++k)
        for (Eigen::Index i = 0; i < lags.size(); ++i) {
          const double d = lags[i];
          const double tau = bounded ? d / (1 + d / p.train_context) : d;
          const Eigen::MatrixXd G = (d * rotation_part(m, p.gamma, w[k]) + (eta * tau) * nilpotent_part(m)).exp();
          for (int q = 0; q < m; ++q) {
            CAPTURE(m);
            CAPTURE(bounded);
            CAPTURE(d);
            // As for 1/L: 1e-11 relative to the block's magnitude (eta tau)^q/q! (up to 303 at raw tau, q = 2).
            const double scale = std::max(1.0, std::pow(eta * tau, q));
            CHECK(std::fabs(chain_entry(X, i, p.num_freqs, q, false, k) - G(0, 2 * q)) <= 1e-11 * scale);
            CHECK(std::fabs(chain_entry(X, i, p.num_freqs, q, true, k) - G(1, 2 * q)) <= 1e-11 * scale);
          }
        }
    }
  }
  // x = d/L and the that of every other method stay as they were: the same bits with or without eta.
  BasisParams plain = p;
  plain.eta.reset();
  for (const char* name : {"alibi", "rope_alibi", "real_jordan", "direct_sum", "direct_sum_poly_m4",
                           "jordan_scaled_m3_c010", "damped_rope"}) {
    CAPTURE(name);
    const Method m = parse_method(name);
    CHECK((features(m, p, lags).array() == features(m, plain, lags).array()).all());
  }
  // eta = 1/L exactly (L = 1024: 2^-10) is the default to the bit, both shear times.
  BasisParams exact = plain;
  exact.eta = 1.0 / 1024;
  for (bool bounded : {true, false}) {
    const Method m = method::Jordan{3, {}, bounded};
    CHECK((features(m, exact, lags).array() == features(m, plain, lags).array()).all());
  }
}

TEST_CASE("a shear rate eta is validated (finite, > 0, 1/eta finite) and sets where raw Jordan columns overflow") {
  for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity(), 1e-320}) {
    CAPTURE(bad);
    BasisParams p = paper_params();
    p.eta = bad;
    CHECK_THROWS_WITH_AS(p.validate(), doctest::Contains("eta = "), InputError);
    CHECK_THROWS_WITH_AS(p.validate(), doctest::Contains("(must be finite and > 0 with 1/eta finite)"), InputError);
    CHECK_THROWS_AS(features(method::Jordan{2, {}, {}}, p, Eigen::VectorXd::Zero(2)), InputError);
  }
  // Raw Jordan m = 3, gamma = 0: the largest column is (eta d)^2/2!; with eta = 1 it stays finite while
  // d <= sqrt(2 DBL_MAX), less the margin of 64 in the value (as for 1/L above).
  BasisParams p = paper_params();
  p.num_freqs = 1;
  p.eta = 1;
  const Method raw = method::Jordan{3, 0.0, false};
  const double top = std::sqrt(2.0) * std::sqrt(std::numeric_limits<double>::max());
  const auto o = find_lag_overflow(raw, p, Eigen::VectorXd::Constant(1, 1e300));
  REQUIRE(o);
  CHECK(o->limit <= top);
  CHECK(o->limit >= top / 16);
  CHECK(features(raw, p, Eigen::VectorXd::Constant(1, o->limit)).allFinite());
  CHECK_THROWS_AS(features(raw, p, Eigen::VectorXd::Constant(1, 1e300)), InputError);
  // ln of the largest column at d = 1e6, eta = 3e-3: (3000)^2/2.
  p.eta = 3e-3;
  CHECK(log_max_column(raw, p, 1e6) == doctest::Approx(2 * std::log(3000.0) - std::log(2.0)).epsilon(1e-14));
  // eta = 1/L is the default's limit to the bit.
  BasisParams plain = paper_params(), exact = paper_params();
  plain.num_freqs = exact.num_freqs = 1;
  exact.eta = 1.0 / 1024;
  const auto a = find_lag_overflow(raw, plain, Eigen::VectorXd::Constant(1, 1e300));
  const auto b = find_lag_overflow(raw, exact, Eigen::VectorXd::Constant(1, 1e300));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->limit == b->limit);
}
