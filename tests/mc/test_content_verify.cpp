// The content Monte Carlo of lib/ropekit/mc/content_verify.hpp (spec encodings.md section 1): the mean
// rho tr G and the variance ||G||_F^2 + rho^2 tr G^2 pass at false-alarm rate 1e-6 for every relative family,
// a wrong rho fails, the variance formula against an independent derivation for n = 2, thread-count
// independence, and refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/mc/content_verify.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "support.hpp"
#include "tests/encoding_spellings.hpp"

using namespace ropekit;
using ropekit::test::test_seed;

namespace {

// The contract's spellings (tests/encoding_spellings.hpp), parsed with dim = 16 where a spelling leaves it unset,
// so every operator stays small (n <= 64).
const std::vector<std::string>& kSpellings = ropekit::test::kContractSpellings;

Encoding small(const std::string& text) {
  EncodingDefaults d;
  d.dim = 16;
  return parse_encoding(text, Where("test"), d);
}

ContentVerifyReport run(const Encoding& e, const Lags& lags, double rho, std::optional<double> assumed,
                        std::uint64_t seed, std::int64_t trials = 20000, int threads = 0, double alpha = 1e-6) {
  ContentVerifyOptions o;
  o.encoding = e;
  o.lags = lags;
  o.rho = rho;
  o.assumed_rho = assumed;
  o.mc.trials = trials;
  o.mc.seed = seed;
  o.mc.threads = threads;
  o.alpha = alpha;
  return verify_content(o);
}

Lags lags_1d(std::initializer_list<double> v) {
  Lags l(static_cast<Eigen::Index>(v.size()), 1);
  Eigen::Index i = 0;
  for (double x : v) l(i++, 0) = x;
  return l;
}
}  // namespace

TEST_CASE("mean rho tr G and variance ||G||_F^2 + rho^2 tr G^2 pass at false-alarm rate 1e-6 for every relative family") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const Lags lags = lags_1d({0, 1, 10});
  for (const auto& text : kSpellings) {
    CAPTURE(text);
    const Encoding e = small(text);
    REQUIRE(operator_dim(e) <= 64);
    const ContentVerifyReport r = run(e, lags, 0.5, std::nullopt, seed);
    CAPTURE(r.max_abs_z_mean);
    CAPTURE(r.max_abs_z_var);
    CAPTURE(r.z_critical);
    CHECK(r.pass);
    // Bonferroni over mean and variance at 3 lags: alpha / 6 per check, two-sided.
    CHECK(r.alpha_per_check == doctest::Approx(1e-6 / 6).epsilon(1e-15));
    CHECK(r.z_critical == doctest::Approx(bonferroni_z(1e-6, 6)).epsilon(1e-15));
  }
  // N-D RoPE with 2-D lags (vectors), and a negative correlation on a real family.
  Lags lags2(3, 2);
  lags2 << 0, 0, 1, 0, 0.5, 2;
  const ContentVerifyReport nd = run(parse_encoding("nd:family=axial,dim=8,axes=2,base=100"), lags2, 0.5, std::nullopt, seed);
  CAPTURE(nd.max_abs_z_mean);
  CAPTURE(nd.max_abs_z_var);
  CHECK(nd.pass);
  CHECK(nd.lags[2].lag == std::vector<double>{0.5, 2});
  CHECK(run(parse_encoding("alibi:slope=0.5,L=64"), lags, -0.8, std::nullopt, seed).pass);
}

TEST_CASE("a wrong rho fails: sampled 0.5, expected values at rho = 0") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  // rope:dim=32 at lag 0: G = I_32, so the scores have mean rho n = 0.5 * 32 = 16 and variance
  // n + rho^2 n = 32 + 8 = 40. The null law at the claimed rho = 0 has mean 0, variance kappa_2 / N = 32 / 20000
  // and no skew (tr B^3 = 0 for G = I, rho = 0), so z of the mean is 16 / sqrt(32 / 20000) = 400 (the sample's
  // own spread sqrt(40 / 20000) moves the mean by about 0.3 %). The bound is 5.33.
  const ContentVerifyReport r = run(parse_encoding("rope:dim=32"), lags_1d({0, 1, 10}), 0.5, 0.0, seed);
  CAPTURE(r.max_abs_z_mean);
  CHECK_FALSE(r.pass);
  CHECK_FALSE(r.lags[0].mean_pass);
  CHECK(r.lags[0].mean_expected == 0);
  CHECK(r.lags[0].z_mean == doctest::Approx(16 / std::sqrt(32.0 / 20000)).epsilon(0.03));
  CHECK(r.lags[0].var_expected == doctest::Approx(32));  // ||I||_F^2, without rho^2 n = 8
  CHECK_FALSE(r.lags[0].var_pass);
  CHECK(r.rho == 0.5);
  CHECK(r.assumed_rho == 0);
  // The same sample against the right rho passes.
  CHECK(run(parse_encoding("rope:dim=32"), lags_1d({0, 1, 10}), 0.5, 0.5, seed).pass);
}

TEST_CASE("n = 2, G = R(a): Var[q^T G k] = 2 + 2 rho^2 cos 2a, derived without Isserlis") {
  // With k = rho q + sigma z (sigma^2 = 1 - rho^2, z independent of q) and R(a) = cos a I + sin a J:
  //   s = q^T R k = rho (cos a |q|^2 + sin a q^T J q) + sigma q^T R z = rho cos a |q|^2 + sigma q^T R z,
  // since q^T J q = 0. The two terms are uncorrelated (E[z] = 0, z independent of q), |q|^2 is chi^2 with 2
  // degrees of freedom (variance 4), and E[(q^T R z)^2] = E[|R^T q|^2] = E[|q|^2] = 2. So
  //   Var[s] = 4 rho^2 cos^2 a + 2 (1 - rho^2) = 2 + rho^2 (4 cos^2 a - 2) = 2 + 2 rho^2 cos 2a,
  // and E[s] = rho cos a E|q|^2 = 2 rho cos a = rho tr R(a).
  const double theta = 0.7;
  const Encoding e = parse_encoding("rope-freqs:freqs=[0.7]");
  REQUIRE(operator_dim(e) == 2);
  const Lags lags = lags_1d({0, 1, 2.2, 4.5});
  for (double rho : {0.0, 0.5, -0.9, 1.0}) {
    CAPTURE(rho);
    const auto rows = kernel_rows(e, lags, rho);
    for (Eigen::Index i = 0; i < lags.rows(); ++i) {
      const double a = theta * lags(i, 0);  // G = R(-a): cos 2a and cos a are even
      CAPTURE(a);
      CHECK(rows[i].content_variance == doctest::Approx(2 + 2 * rho * rho * std::cos(2 * a)).epsilon(1e-14));
      CHECK(rows[i].content_mean == doctest::Approx(2 * rho * std::cos(a)).epsilon(1e-14));
    }
    const ContentVerifyReport r = run(e, lags, rho, std::nullopt, test_seed());
    CAPTURE(r.max_abs_z_mean);
    CAPTURE(r.max_abs_z_var);
    CHECK(r.pass);
  }
}

TEST_CASE("the same seed gives bit-identical reports with 1 and 2 threads; another seed differs") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const Encoding e = small("jordan:m=2,gamma=1e-3,tau=raw,L=64,dim=8");
  const Lags lags = lags_1d({0, 3, 40});
  // 1000 trials: 3 full chunks and a short one (alpha 0.01: 1000 trials cannot calibrate a variance check at 1e-6).
  const auto one = run(e, lags, 0.3, std::nullopt, seed, 1000, 1, 0.01);
  const auto two = run(e, lags, 0.3, std::nullopt, seed, 1000, 2, 0.01);
  REQUIRE(one.lags.size() == two.lags.size());
  auto bits = [](double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
  };
  for (std::size_t i = 0; i < one.lags.size(); ++i) {
    CAPTURE(i);
    CHECK(bits(one.lags[i].mean_observed) == bits(two.lags[i].mean_observed));
    CHECK(bits(one.lags[i].var_observed) == bits(two.lags[i].var_observed));
    CHECK(bits(one.lags[i].var_stderr) == bits(two.lags[i].var_stderr));
    CHECK(bits(one.lags[i].z_var) == bits(two.lags[i].z_var));
  }
  const auto other = run(e, lags, 0.3, std::nullopt, seed + 1, 1000, 2, 0.01);
  CHECK(other.lags[1].mean_observed != one.lags[1].mean_observed);
}

TEST_CASE("content_score_moments: rho = 1 gives k = q, so G = J (antisymmetric) scores exactly 0") {
  // q^T J q = 0 for every q: every score is 0 up to rounding, mean 0 and variance 0 = ||J||^2 + tr J^2 = 2 - 2.
  Eigen::MatrixXd J(2, 2);
  J << 0, -1, 1, 0;
  McOptions mc;
  mc.trials = 600;
  mc.seed = test_seed();
  const auto m = content_score_moments({J, Eigen::MatrixXd::Identity(2, 2)}, 1.0, mc);
  REQUIRE(m.size() == 2);
  CHECK(m[0].n == 600);
  CHECK(std::abs(m[0].mean) <= 1e-14);
  CHECK(m[0].variance() <= 1e-28);
  CHECK(m[1].mean > 0);  // |q|^2
}

TEST_CASE("verify_content refuses what it cannot check, naming the parameter") {
  const Lags lags = lags_1d({0, 1});
  auto throws_naming = [](auto f, const std::string& name) {
    bool threw = false;
    try {
      f();
    } catch (const InputError& e) {
      threw = true;
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(name) != std::string::npos);
    }
    CHECK(threw);
  };
  const Encoding rope = parse_encoding("rope:dim=8");
  throws_naming([&] { run(parse_encoding("sinusoidal:dim=8"), lags, 0.5, std::nullopt, 1); }, "absolute");
  throws_naming([&] { run(rope, lags, 1.5, std::nullopt, 1); }, "rho = 1.5");
  throws_naming([&] { run(rope, lags, 0.5, -2.0, 1); }, "assume_rho = -2");
  throws_naming([&] { run(rope, lags, 0.5, std::nullopt, 1, 1); }, "trials");
  Lags two(1, 2);
  two << 1, 2;
  throws_naming([&] { run(rope, two, 0.5, std::nullopt, 1); }, "lags");
  throws_naming([&] { run(parse_encoding("nd:family=axial,dim=8,axes=2"), lags, 0.5, std::nullopt, 1); }, "2-D");
  // ALiBi's shear grows as slope Dp: at 1e70 ||G||_F is 1e70, and s^4 sums would overflow.
  throws_naming([&] { run(parse_encoding("alibi:slope=1"), lags_1d({1e70}), 0.5, std::nullopt, 1); }, "lags");
  ContentVerifyOptions o;
  o.encoding = rope;
  o.lags = lags;
  o.alpha = 0;
  throws_naming([&] { verify_content(o); }, "alpha");
}

TEST_CASE("the cost counts 2 n^2 flops per trial and lag, and the operators' memory") {
  const Cost small_run = content_verify_cost(20000, 128, 4, 2);
  CHECK(small_run.fits());
  CHECK(small_run.seconds < 2);  // the default rope run stays below the notice
  // Doubling trials or lags about doubles the time; doubling n about quadruples it.
  const Cost t2 = content_verify_cost(40000, 128, 4, 2), n2 = content_verify_cost(20000, 256, 4, 2);
  CHECK(t2.seconds / small_run.seconds == doctest::Approx(2).epsilon(0.05));
  CHECK(n2.seconds / small_run.seconds > 3);  // 2 n normals per trial are linear in n
  // One lag of n = 1e6 is 8 TB of operator: never fits.
  CHECK_FALSE(content_verify_cost(2, 1000000, 1, 2).fits());
  CHECK(content_verify_cost(2, 1000000, 1, 2).bytes >= 8e12);
}
