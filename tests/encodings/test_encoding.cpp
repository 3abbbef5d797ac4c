// The encoding contract (spec encodings.md section 1), looped over one spelling of every registered family
// and the reference names: Phi(0) = 1, |Phi| <= 1 and Phi even for orthogonal families, the closed-form kernel
// and content variance against the dense operator, the kernel in the span of the features, the group law for
// exact families (and its measurable failure for stabilized and dynamic ones), spelling round trips, and
// InputError naming the parameter for bad values.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/jordan_block.hpp"
#include "tests/encoding_spellings.hpp"

using namespace ropekit;

namespace {

const std::vector<std::string>& kSpellings = ropekit::test::kContractSpellings;

const std::vector<double> kLags = {0, 1e-8, 0.5, 1, 37.5, 1e4};

Eigen::MatrixXd G(const Encoding& e, double lag) {
  std::vector<double> v(static_cast<std::size_t>(lag_dims(e)), 0.0);
  v[0] = lag;
  return relative_operator(e, v);
}

bool dynamic(const std::string& s) { return s.find("dynamic") != std::string::npos; }

}  // namespace

TEST_CASE("contract: kernel and content variance equal the dense operator's; Phi(0) = 1; |Phi| <= 1 and even when orthogonal") {
  for (const auto& text : kSpellings) {
    CAPTURE(text);
    const Encoding e = parse_encoding(text);
    const Eigen::MatrixXd G0 = G(e, 0);
    REQUIRE(G0.rows() == operator_dim(e));
    Lags lags(static_cast<Eigen::Index>(2 * kLags.size()), 1);
    for (std::size_t i = 0; i < kLags.size(); ++i) lags(2 * i, 0) = kLags[i], lags(2 * i + 1, 0) = -kLags[i];
    const double rho = 0.3;
    const auto rows = kernel_rows(e, lags, rho);
    CHECK(rows[0].kernel == doctest::Approx(1).epsilon(1e-15));
    for (Eigen::Index i = 0; i < lags.rows(); ++i) {
      CAPTURE(lags(i, 0));
      const Eigen::MatrixXd g = G(e, lags(i, 0));
      // Independent route: traces and norms of the assembled matrix (closed forms per block on the other side).
      // Tolerance: sums of n terms of size <= max|c_p|^2, rounding eps each.
      const double scale = std::max(1.0, g.squaredNorm());
      CHECK(std::abs(rows[i].kernel - g.trace() / G0.trace()) <= 1e-13 * std::max(1.0, g.norm()));
      CHECK(std::abs(rows[i].content_variance - (g.squaredNorm() + rho * rho * (g * g).trace())) <= 1e-13 * scale);
      CHECK(std::abs(rows[i].content_mean - rho * g.trace()) <= 1e-13 * scale);
      if (is_orthogonal(e)) {
        CHECK(std::abs(rows[i].kernel) <= 1 + 1e-15);
        CHECK((g.transpose() * g - Eigen::MatrixXd::Identity(g.rows(), g.cols())).norm() <= 1e-12);
      }
    }
    if (is_orthogonal(e))
      for (std::size_t i = 0; i < kLags.size(); ++i)  // Phi(-Dp) = Phi(Dp) (tr R(-a) = tr R(a))
        CHECK(rows[2 * i].kernel == doctest::Approx(rows[2 * i + 1].kernel).epsilon(1e-14));
  }
}

TEST_CASE("contract: the kernel lies in the span of the features (least-squares residual at rounding level)") {
  for (const auto& text : kSpellings) {
    CAPTURE(text);
    const Encoding e = parse_encoding(text);
    if (dynamic(text)) continue;  // G depends on the sequence length too; its kernel at fixed T is rope's
    Lags lags(200, 1);
    for (int i = 0; i < 200; ++i) lags(i, 0) = 0.37 * i;
    const auto f = features(e, lags);
    REQUIRE(f.values.rows() == 200);
    REQUIRE(f.names.size() == static_cast<std::size_t>(f.values.cols()));
    CHECK(f.names[0] == "1");
    Eigen::VectorXd y(200);
    y = kernel(e, lags);
    const Eigen::VectorXd w = f.values.completeOrthogonalDecomposition().solve(y);
    // Residual relative to |y|: a QR solve leaves about cond * eps; these bases are small and well separated.
    CHECK((f.values * w - y).norm() <= 1e-9 * std::max(1.0, y.norm()));
  }
}

TEST_CASE("contract: exact families are one-parameter groups; stabilized and dynamic ones measurably are not") {
  const std::vector<double> window = {0, 1, 3, 17, 40, 100};
  for (const auto& text : kSpellings) {
    CAPTURE(text);
    const Encoding e = parse_encoding(text);
    const auto x = exactness(e, window);
    if (is_exact(e)) {
      CHECK(x.group_law <= 1e-12);
    } else {
      CHECK(x.group_law >= 1e-6);  // bounded shear time: tau(s) + tau(t) != tau(s + t); dynamic: T changes
    }
    if (is_orthogonal(e)) CHECK(x.orthogonality <= 1e-12);
    if (is_exact(e)) CHECK(x.reversibility <= 1e-10 * std::max(1.0, G(e, 100).norm()));
  }
}

TEST_CASE("contract: every spelling round-trips through the canonical printer") {
  for (const auto& text : kSpellings) {
    CAPTURE(text);
    const Encoding e = parse_encoding(text);
    const std::string canon = spelling(e);
    CAPTURE(canon);
    const Encoding back = parse_encoding(canon);
    CHECK(spelling(back) == canon);
    // Same operator, not just the same text.
    CHECK((G(back, 37.5) - G(e, 37.5)).norm() == 0);
  }
}

TEST_CASE("reference method names are aliases of the family values, with identical features") {
  struct Case { const char* reference; const char* family; };
  const Case cases[] = {
      {"rope", "rope:dim=128,base=10000,F=64"},
      {"rope_alibi", "direct-sum:[rope(dim=128,base=1e4),alibi(slope=1,L=1024)]"},
      {"direct_sum", "direct-sum:[rope,alibi,real-jordan]"},
      {"direct_sum_poly_m4", "direct-sum:[rope,poly(k=4)]"},
      {"jordan_m3", "jordan:m=3"},
      {"jordan_raw_tau", "jordan:tau=raw"},
      {"jordan_no_gamma", "jordan:gamma=0"},
      {"jordan_exact_c010", "jordan-scaled:m=2,c=0.1"},
      {"damped_rope", "damped-rope"},
      {"rope_matched_m3", "rope-matched:k=3"},
  };
  Lags lags(50, 1);
  for (int i = 0; i < 50; ++i) lags(i, 0) = 3.0 * i;
  for (const auto& c : cases) {
    CAPTURE(c.reference);
    const auto a = features(parse_encoding(c.reference), lags), b = features(parse_encoding(c.family), lags);
    CHECK(a.names == b.names);
    CHECK((a.values - b.values).norm() == 0);
    CHECK(spelling(parse_encoding(c.reference)) == spelling(parse_encoding(c.family)));
  }
}

TEST_CASE("the Jordan operator is the matrix exponential of its generator (paper eq. 3.3)") {
  // jordan:tau=raw with one frequency theta: G(Dp) = exp(Dp Jhat), J = (-gamma - i theta) I + (1/L) N_m (the
  // rotation by -theta Dp of spec section 2), computed by Eigen's Pade exponential.
  const Encoding e = parse_encoding("jordan:m=3,gamma=0.01,tau=raw,L=50,freqs=[0.7]");
  JordanBlock b;
  b.m = 3;
  b.gamma = 0.01;
  b.omega = -0.7;
  b.eta = 1.0 / 50;
  for (double d : {0.0, 0.3, 5.0, 80.0}) {
    const Eigen::MatrixXd expected = (d * jordan_generator(b)).exp();
    CHECK((G(e, d) - expected).norm() <= 1e-12 * expected.norm());
  }
}

TEST_CASE("ALiBi is the unipotent block and its content variance grows as slope^2 Dp^2") {
  const Encoding e = parse_encoding("alibi:slope=0.25,L=10");
  Lags lags(1, 1);
  lags(0, 0) = 8;
  const auto r = kernel_rows(e, lags, 0.5)[0];
  CHECK(r.kernel == 1);                                     // tr U = 2 = tr U(0)
  CHECK(r.content_variance == doctest::Approx(2 + 4 + 0.25 * 2));  // ||U||^2 = 2 + (m Dp)^2, tr U^2 = 2
}

TEST_CASE("rf-rope: realised kernel approaches the closed form as blocks grow, error ~ D^{-1/2} for iid draws") {
  // RMS over lags of (realised - Phi), averaged over seeds, at D and 16 D: the ratio is 4 for iid (sqrt 16).
  auto rms = [](int D) {
    double s = 0;
    int n = 0;
    for (int seed = 1; seed <= 40; ++seed) {
      const Encoding e = parse_encoding("rf-rope:spectrum=gaussian(sigma=1),blocks=" + std::to_string(D) +
                                        ",seed=" + std::to_string(seed));
      Lags lags(8, 1);
      for (int i = 0; i < 8; ++i) lags(i, 0) = 0.4 * (i + 1);
      for (const auto& r : kernel_rows(e, lags)) s += (r.kernel - r.expected_kernel) * (r.kernel - r.expected_kernel), ++n;
    }
    return std::sqrt(s / n);
  };
  const double ratio = rms(16) / rms(256);
  // 320 squared errors each side: the ratio's sampling error is about 10 %; bounds 4 / 1.35 and 4 * 1.35.
  CHECK(ratio > 4 / 1.35);
  CHECK(ratio < 4 * 1.35);
}

TEST_CASE("rf-rope: frequency_variance is Prop 4's Var[cos u]/D for iid draws") {
  const Encoding e = parse_encoding("rf-rope:spectrum=gaussian(sigma=1),blocks=10,seed=1");
  Lags lags(1, 1);
  lags(0, 0) = 0.8;
  const auto r = kernel_rows(e, lags)[0];
  const double a = 0.8 * 0.8;  // Gaussian: Var[cos u] = (1 - e^{-a})^2 / 2 with Phi = e^{-a/2}
  CHECK(r.expected_kernel == doctest::Approx(std::exp(-a / 2)).epsilon(1e-15));
  CHECK(r.frequency_variance == doctest::Approx(std::pow(-std::expm1(-a), 2) / 2 / 10).epsilon(1e-13));
}

TEST_CASE("every bad parameter throws InputError naming it") {
  struct Bad { std::string spelling, names; };
  const Bad bad[] = {
      {"rope:dim=63", "dim"},
      {"rope:dim=0", "dim"},
      {"rope:base=-1", "base"},
      {"rope:base=nan", "base"},
      {"rope:F=0", "F"},
      {"rope:partial=1.5", "partial"},
      {"rope:dim=10,partial=0.05", "partial"},  // int(10 * 0.05) = 0 (0.5 is taken, as transformers: r = 5)
      {"rope:scaling=yarn(factor=x)", "factor"},
      {"rope:scaling=warp(factor=2)", "warp"},
      {"rope:dim=64,scaling=dynamic(factor=0,orig=64)", "factor"},  // 0.5 is taken with a note, as transformers
      {"rope-freqs:freqs=[1,-2]", "freqs"},
      {"rope-freqs", "freqs"},
      {"rope:freqs=[1],dim=8", "dim"},
      {"jordan:m=0", "m"},
      {"jordan:m=33", "m"},
      {"jordan:tau=sideways", "tau"},
      {"jordan:gamma=-1", "gamma"},
      {"jordan:L=0", "L"},
      {"jordan-scaled:m=1", "m"},
      {"jordan-scaled:c=-0.1", "c"},
      {"alibi:slope=0", "slope"},
      {"poly:k=1", "k"},
      {"xpos:scale_base=0", "scale_base"},
      {"rf-rope:blocks=8", "spectrum"},
      {"rf-rope:spectrum=gaussian(sigma=-1),blocks=8", "sigma"},
      {"rf-rope:spectrum=gaussian(sigma=1),blocks=0", "blocks"},
      {"rf-rope:spectrum=gaussian(sigma=1,dims=2),blocks=8", "k = 1"},
      {"rf-rope:spectrum=gaussian(sigma=1),blocks=8,seed=3,sampling=quantile", "sampling"},
      {"direct-sum:[rope]", "parts"},
      {"direct-sum:[rope,warp]", "warp"},
      {"direct-sum:[rope,nd(family=axial,dim=8,axes=2)]", "parts[1]"},
      {"direct-sum:[rope,sinusoidal]", "parts[1]"},
      {"warp", "warp"},
      {"rope:dim=64,color=red", "color"},
      {"jordan_exact_m4_c010", "jordan_scaled_m4_c010"},
      {"nd:family=axial,dim=7", "dim"},
      {"sinusoidal:dim=7", "dim"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.spelling);
    bool threw = false;
    try {
      (void)parse_encoding(b.spelling, Where("ropekit kernel"));
    } catch (const InputError& err) {
      threw = true;
      const std::string what = err.what();
      CAPTURE(what);
      CHECK(what.find(b.names) != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
    }
    CHECK(threw);
  }
}

TEST_CASE("sinusoidal: not relative, with a large relativity defect; kernel and features refuse") {
  const Encoding e = parse_encoding("sinusoidal:dim=32,seed=3");
  CHECK_FALSE(is_relative(e));
  const auto x = exactness(e, {0, 1, 5, 20, 50});
  CHECK(x.relativity > 0.1);  // a random W_q^T W_k does not commute with the rotations
  Lags lags(1, 1);
  lags(0, 0) = 1;
  CHECK_THROWS_AS(kernel(e, lags), InputError);
  CHECK_THROWS_AS(features(e, lags), InputError);
}

TEST_CASE("proportional RoPE's kernel: 64 rotating pairs over the whole head, 192 identity pairs (Gemma 4)") {
  // Phi(Dp) = (sum_{i<64} cos(1e6^{-2i/512} Dp) + 192) / 256, written here with exp/log instead of pow.
  const Encoding e = parse_encoding("rope:dim=512,base=1e6,partial=0.25,scaling=proportional");
  CHECK(spelling(e) == "rope:dim=512,base=1000000,partial=0.25,F=64,scaling=proportional(factor=1)");
  Lags lags(4, 1);
  lags << 0, 1, 188, 1e6;
  const auto rows = kernel_rows(e, lags, 0);
  for (Eigen::Index j = 0; j < lags.rows(); ++j) {
    double sum = 192;
    for (int i = 0; i < 64; ++i) sum += std::cos(std::exp(-(2.0 * i / 512) * std::log(1e6)) * lags(j, 0));
    CAPTURE(lags(j, 0));
    // 64 cosines whose arguments carry |theta Dp| eps relative error: 1e6 * 2e-16 at the largest lag.
    CHECK(std::abs(rows[static_cast<std::size_t>(j)].kernel - sum / 256) <= 1e-9);
  }
  CHECK(rows[0].kernel == 1);
}

TEST_CASE("DeepSeek's decoupled head: rope (+) nope(dim=128), kernel (64 Phi_rope + 128) / 192") {
  const std::string rope = "rope:dim=64,base=10000,scaling=yarn(factor=40,orig=4096,mscale=1,mscale_all_dim=1)";
  const Encoding sum = parse_encoding("direct-sum:[rope(dim=64,base=10000,scaling=yarn(factor=40,orig=4096,mscale=1,"
                                      "mscale_all_dim=1)),nope(dim=128)]");
  CHECK(operator_dim(sum) == 192);
  Lags lags(3, 1);
  lags << 1, 1000, 1e5;
  const Eigen::VectorXd whole = kernel(sum, lags), part = kernel(parse_encoding(rope), lags);
  for (Eigen::Index i = 0; i < 3; ++i) CHECK(whole[i] == doctest::Approx((64 * part[i] + 128) / 192).epsilon(1e-15));
  CHECK(spelling(parse_encoding("nope")) == "nope");  // the default one dim keeps the old spelling
  CHECK(spelling(parse_encoding("nope:dim=3")) == "nope:dim=3");
  CHECK(operator_dim(parse_encoding("nope:dim=3")) == 3);
}

TEST_CASE("nd mrope: Qwen2-VL's contiguous and Qwen3-VL's interleaved sections, text tokens see 1-D RoPE") {
  // Phi(Dt, Dh, Dw) = (1/64) sum_i cos(theta_i D_axis(i)), theta_i = 1e6^{-2i/128} by exp/log.
  auto theta = [](int i) { return std::exp(-(2.0 * i / 128) * std::log(1e6)); };
  auto closed = [&](auto axis_of, double dt, double dh, double dw) {
    const double d[3] = {dt, dh, dw};
    double s = 0;
    for (int i = 0; i < 64; ++i) s += std::cos(theta(i) * d[axis_of(i)]);
    return s / 64;
  };
  auto contiguous = [](int i) { return i < 16 ? 0 : i < 40 ? 1 : 2; };                         // [16, 24, 24]
  auto interleaved = [](int i) { return i % 3 == 1 && i < 60 ? 1 : i % 3 == 2 && i < 60 ? 2 : 0; };  // [24, 20, 20]
  const Encoding q2 = parse_encoding("nd:family=mrope,dim=128,base=1e6,sections=[16,24,24]");
  const Encoding q3 = parse_encoding("nd:family=mrope,dim=128,base=1e6,sections=[24,20,20],interleaved=true");
  const Encoding text = parse_encoding("rope:dim=128,base=1e6");
  Lags lags(4, 3), text_lags(4, 1);
  lags << 1000, 1000, 1000, 1000, 0, 0, 0, 700, 0, 3, 50, 9000;
  text_lags << 1000, 1000, 1000, 1000;
  const Eigen::VectorXd k2 = kernel(q2, lags), k3 = kernel(q3, lags), k1 = kernel(text, text_lags);
  for (Eigen::Index j = 0; j < 4; ++j) {
    CAPTURE(j);
    // cosines of arguments up to 9000 rad: |theta d| eps relative error each, 1e-12 covers it
    CHECK(std::abs(k2[j] - closed(contiguous, lags(j, 0), lags(j, 1), lags(j, 2))) < 1e-12);
    CHECK(std::abs(k3[j] - closed(interleaved, lags(j, 0), lags(j, 1), lags(j, 2))) < 1e-12);
  }
  CHECK(std::abs(k2[0] - k1[0]) < 1e-14);  // t = h = w: 1-D RoPE
  CHECK(std::abs(k3[0] - k1[0]) < 1e-14);
  CHECK_THROWS_WITH_AS(parse_encoding("nd:family=mrope,dim=128,sections=[16,24,16]"),
                       doctest::Contains("summing to dim / 2 = 64 (they sum to 56)"), InputError);
  CHECK_THROWS_WITH_AS(parse_encoding("nd:family=mrope,dim=128"), doctest::Contains("sections"), InputError);
}

TEST_CASE("nd: vector lags, kernel equals the torus closed form") {
  const Encoding e = parse_encoding("nd:family=axial,dim=8,axes=2,base=100");
  REQUIRE(lag_dims(e) == 2);
  Lags lags(1, 2);
  lags << 1.5, -0.5;
  const auto t = frequencies(e);  // rows = planes, cols = axes
  double expected = 0;
  for (Eigen::Index b = 0; b < t.theta.rows(); ++b) expected += std::cos(t.theta.row(b).dot(lags.row(0)));
  expected /= t.theta.rows();
  CHECK(kernel(e, lags)[0] == doctest::Approx(expected).epsilon(1e-14));
}

TEST_CASE("xPos decay factors: the public values of spec section 3 (n = 64: first 0.285714, last 0.977679)") {
  // At Dp = S the block i is zeta_i R(-theta_i S): its 2 x 2 determinant is zeta_i^2.
  const Encoding e = parse_encoding("xpos:dim=64,base=1e4,scale_base=512");
  const std::vector<double> lag{512};
  const Eigen::MatrixXd g = relative_operator(e, lag);
  REQUIRE(g.rows() == 64);
  const double first = std::sqrt(g.block<2, 2>(0, 0).determinant());
  const double last = std::sqrt(g.block<2, 2>(62, 62).determinant());
  CHECK(first == doctest::Approx(0.285714).epsilon(1e-6));  // printed to 6 digits
  CHECK(last == doctest::Approx(0.977679).epsilon(1e-6));
}

TEST_CASE("frequencies(encoding, T, convention, float32) is the schedule's under that convention, per family") {
  const FrequencySchedule yarn{Geometric{.dim = 64, .base = 1e4},
                               scaling::Yarn{.factor = 16, .orig = 4096, .attention_factor = 0.5}};
  for (const Convention c : {Convention::huggingface, Convention::ggml})
    for (const bool f32 : {false, true}) {
      CAPTURE(f32);
      const auto want = frequencies(yarn, std::nullopt, c, f32);
      for (const char* text : {"rope:dim=64,scaling=yarn(factor=16,orig=4096,attention_factor=0.5)",
                               "jordan:m=2,dim=64,scaling=yarn(factor=16,orig=4096,attention_factor=0.5)",
                               "direct-sum:[alibi,rope(dim=64,scaling=yarn(factor=16,orig=4096,attention_factor=0.5))]"}) {
        CAPTURE(text);
        const auto got = frequencies(parse_encoding(text), std::nullopt, c, f32);
        CHECK(got.theta == want.theta);  // the same computation: bit for bit
        CHECK(got.attention_factor == want.attention_factor);
      }
    }
  // The two-argument form is huggingface in float64; float32 values are floats.
  const Encoding nd = parse_encoding("nd:dim=8,axes=2,base=7");
  CHECK(frequencies(nd).theta == frequencies(nd, std::nullopt, Convention::huggingface, false).theta);
  const auto f = frequencies(nd, std::nullopt, Convention::huggingface, true).theta;
  for (Eigen::Index i = 0; i < f.size(); ++i) CHECK(static_cast<double>(static_cast<float>(f.data()[i])) == f.data()[i]);
}

TEST_CASE("exactness at a fixed sequence length: dynamic NTK is a group for fixed T, not across T") {
  const Encoding e = parse_encoding("rope:dim=32,scaling=dynamic(factor=4,orig=64)");
  const std::vector<double> window = {0, 1, 3, 17, 40, 100};
  CHECK(exactness(e, window).group_law >= 1e-6);       // T = |Dp| + 1 per lag: the base changes with the lag
  CHECK(exactness(e, window, 500.0).group_law <= 1e-12);  // one T: RoPE with base B'(500)
}

TEST_CASE("exactness keeps a NaN defect: G overflowing at a window lag is not reported as exact") {
  // e^{-gamma Dp} at Dp = -1e6, gamma = 1: inf; G(-s) G(s) = inf * 0 = NaN (std::max dropped it: defect 0).
  const Exactness x = exactness(parse_encoding("jordan:m=2,gamma=1,tau=raw,dim=4"), {1000, 1e6});
  CHECK(std::isnan(x.reversibility));
}

TEST_CASE("n_features counts features' columns without evaluating them") {
  std::vector<std::string> all = kSpellings;
  for (const char* more : {"rope:dim=32,partial=0.25,F=3", "rope-matched:k=5,dim=16", "xpos:dim=10",
                           "direct-sum:[rope(dim=8),poly(k=5),jordan(m=3,dim=4),nope]",
                           "nd:family=axial,dim=8,axes=2,base=100", "jordan_m4", "direct_sum"})
    all.emplace_back(more);
  for (const auto& text : all) {
    CAPTURE(text);
    if (dynamic(text)) continue;  // features need a sequence length
    const Encoding e = parse_encoding(text);
    Lags lags = Lags::Constant(3, lag_dims(e), 1.5);
    CHECK(n_features(e) == features(e, lags).values.cols());
  }
  CHECK_THROWS_AS(n_features(parse_encoding("sinusoidal:dim=8")), InputError);
}

// ---------------------------------------------------------------------------------------------
// jordan's explicit shear rate eta (absent: 1/L).

namespace {

// Bit equality that also holds for NaN (kernel_rows' expected_kernel of a non-rf family).
bool same_bits(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// R(phase) = [[cos, -sin], [sin, cos]] (block.hpp).
Eigen::Matrix2d rotation(double phase) {
  Eigen::Matrix2d R;
  R << std::cos(phase), -std::sin(phase), std::sin(phase), std::cos(phase);
  return R;
}

}  // namespace

TEST_CASE("jordan eta: spelled right after L with an exact round trip; absent, nothing new is printed") {
  const Encoding e = parse_encoding("jordan:m=2,gamma=1e-3,tau=bounded,L=1024,eta=0.003,dim=8,base=100");
  const auto& j = std::get<enc::Jordan>(e.value);
  REQUIRE(j.eta);
  CHECK(*j.eta == 0.003);
  CHECK(spelling(e) == "jordan:m=2,gamma=0.001,tau=bounded,L=1024,eta=0.003,dim=8,base=100,F=4");
  CHECK(spelling(parse_encoding(spelling(e))) == spelling(e));
  // A rate with no short decimal (what a solver returns) reads back to the same double.
  enc::Jordan tuned = j;
  tuned.eta = 0.1 + 0.2;  // 0.30000000000000004
  const Encoding back = parse_encoding(spelling(Encoding{tuned}));
  CHECK(std::get<enc::Jordan>(back.value).eta == tuned.eta);
  // Absent: the spelling of today, and eta stays empty (1/L) through the round trip.
  const Encoding plain = parse_encoding("jordan:m=2,gamma=1e-3,tau=bounded,L=1024,dim=8,base=100");
  CHECK(spelling(plain) == "jordan:m=2,gamma=0.001,tau=bounded,L=1024,dim=8,base=100,F=4");
  CHECK_FALSE(std::get<enc::Jordan>(parse_encoding(spelling(plain)).value).eta);
  // Inside a direct sum (the nested printer) too.
  const std::string nested = spelling(parse_encoding("direct-sum:[jordan(m=2,L=64,eta=0.5,dim=4),alibi(L=64)]"));
  CHECK(nested.find("L=64,eta=0.5,") != std::string::npos);
  CHECK(spelling(parse_encoding(nested)) == nested);
}

TEST_CASE("jordan eta: bad values throw one-line InputError naming eta, the value and the constraint") {
  // 1e-320 is > 0 but subnormal: 1/eta overflows (the bounded shear time tends to 1/eta). nan and inf are
  // refused by the spelling's number reader, which says "(must be finite)" for every key.
  struct Case { const char* value; const char* constraint; };
  const char* rate = "(must be finite and > 0 with 1/eta finite)";
  for (const Case& c : {Case{"0", rate}, Case{"-1", rate}, Case{"nan", "(must be finite)"},
                        Case{"inf", "(must be finite)"}, Case{"1e-320", rate}}) {
    const std::string text = std::string("jordan:m=2,L=1024,eta=") + c.value;
    CAPTURE(text);
    std::string what;
    try {
      (void)parse_encoding(text, Where("ropekit kernel"));
    } catch (const InputError& err) {
      what = err.what();
    }
    CAPTURE(what);
    CHECK(what.find(std::string("eta = ") + c.value + " (must be") != std::string::npos);
    CHECK(what.find(c.constraint) != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  // eta is jordan's alone: a family without it refuses the key.
  CHECK_THROWS_AS(parse_encoding("jordan-scaled:m=2,eta=0.5"), InputError);
}

TEST_CASE("jordan eta = 1/L given explicitly is today's encoding to the bit (features, G, kernel rows, exactness)") {
  // L = 1024: 1/L = 2^-10 = 0.0009765625 exactly, so eta |Dp| and |Dp|/L round alike.
  for (const char* tau : {"bounded", "raw"}) {
    const std::string base = std::string("jordan:m=3,gamma=1e-3,tau=") + tau + ",L=1024";
    const Encoding absent = parse_encoding(base + ",dim=16,base=100");
    const Encoding given = parse_encoding(base + ",eta=0.0009765625,dim=16,base=100");
    CAPTURE(spelling(given));
    CHECK(spelling(given) != spelling(absent));
    Lags lags(7, 1);
    lags << 0, 1, 37, 500, 4095, 1e5, 3.5;
    const auto fa = features(absent, lags), fg = features(given, lags);
    CHECK(fa.names == fg.names);
    CHECK((fa.values.array() == fg.values.array()).all());
    for (double d : {0.0, 1.0, -12.0, 37.5, 4095.0, 1e6}) {
      CAPTURE(d);
      const std::vector<double> lag{d};
      CHECK((relative_operator(absent, lag).array() == relative_operator(given, lag).array()).all());
    }
    Lags signed_lags(4, 1);
    signed_lags << 0, -3, 77, 1e4;
    const auto ka = kernel_rows(absent, signed_lags, 0.4), kg = kernel_rows(given, signed_lags, 0.4);
    for (std::size_t i = 0; i < ka.size(); ++i) {
      CHECK(ka[i].kernel == kg[i].kernel);
      CHECK(ka[i].content_mean == kg[i].content_mean);
      CHECK(ka[i].content_variance == kg[i].content_variance);
      CHECK(same_bits(ka[i].expected_kernel, kg[i].expected_kernel));
      CHECK(same_bits(ka[i].frequency_variance, kg[i].frequency_variance));
    }
    const std::vector<double> window = {0, 1, 3, 17, 40, 100};
    const Exactness xa = exactness(absent, window), xg = exactness(given, window);
    CHECK(xa.group_law == xg.group_law);
    CHECK(xa.orthogonality == xg.orthogonality);
    CHECK(xa.reversibility == xg.reversibility);
    CHECK(is_exact(absent) == is_exact(given));
    CHECK(n_features(absent) == n_features(given));
  }
}

TEST_CASE("jordan eta = 3e-3, L = 1024, m = 3: feature columns are (that^p/p!) e^{-gamma d} C, S, that = eta tau") {
  // Explicit frequencies, so that the test's omega d is the library's to the bit.
  const double eta = 3e-3, gamma = 1e-3;
  const double omega[] = {1, 0.3, 0.01};
  const int F = 3, m = 3;
  for (const bool bounded : {true, false}) {
    CAPTURE(bounded);
    const Encoding e = parse_encoding(std::string("jordan:m=3,gamma=1e-3,L=1024,eta=3e-3,freqs=[1,0.3,0.01],tau=") +
                                      (bounded ? "bounded" : "raw"));
    const double lags[] = {0, 1, 37, 500, 4095};
    Lags l(5, 1);
    for (int i = 0; i < 5; ++i) l(i, 0) = lags[i];
    const auto f = features(e, l);
    REQUIRE(f.values.cols() == 1 + 2 * m * F);
    REQUIRE(n_features(e) == 1 + 2 * m * F);
    for (int i = 0; i < 5; ++i) {
      const double d = lags[i];
      CAPTURE(d);
      // bounded: tau = d/(1 + d/L) (Jordan-RoPE), that = eta tau = eta d/(1 + d/L); raw: that = eta d.
      const double that = bounded ? eta * d / (1 + d / 1024) : eta * d;
      CHECK(f.values(i, 0) == 1);
      double factorial = 1;
      for (int p = 0; p < m; ++p) {
        if (p > 0) factorial *= p;
        const double envelope = std::pow(that, p) / factorial * std::exp(-gamma * d);
        for (int k = 0; k < F; ++k) {
          CAPTURE(p);
          CAPTURE(k);
          // Columns 1 + 2 F p + k (cos) and 1 + 2 F p + F + k (sin). A few roundings (the product, pow, exp,
          // cos of the same argument): 1e-13 relative to the column's envelope (a cosine near its zero is not
          // a relative quantity).
          const double c = envelope * std::cos(omega[k] * d), s = envelope * std::sin(omega[k] * d);
          CHECK(std::abs(f.values(i, 1 + 2 * F * p + k) - c) <= 1e-13 * envelope);
          CHECK(std::abs(f.values(i, 1 + 2 * F * p + F + k) - s) <= 1e-13 * envelope);
        }
      }
    }
  }
}

TEST_CASE("jordan eta: raw tau is an exact group (defect at rounding); G's (0,1) block is e^{-gamma Dp} eta tau R") {
  const double eta = 3e-3, gamma = 1e-3, w = 0.7;
  const Encoding raw = parse_encoding("jordan:m=3,gamma=1e-3,tau=raw,L=1024,eta=3e-3,freqs=[0.7]");
  const Encoding bounded = parse_encoding("jordan:m=3,gamma=1e-3,tau=bounded,L=1024,eta=3e-3,freqs=[0.7]");
  REQUIRE(is_exact(raw));
  REQUIRE_FALSE(is_exact(bounded));
  const std::vector<double> lags = {0, 1, 3, 17, 40, -25, 100};
  for (double s : lags)
    for (double t : lags) {
      CAPTURE(s);
      CAPTURE(t);
      const Eigen::MatrixXd Gst = G(raw, s + t);
      // The phases w s, w t, w (s + t) are rounded apart: eps w |s + t| <= 2e-14 each, plus products of 6 x 6
      // matrices of entries up to 1: 1e-13 relative.
      CHECK((G(raw, s) * G(raw, t) - Gst).norm() <= 1e-13 * std::max(1.0, Gst.norm()));
    }
  CHECK(exactness(raw, {0, 1, 3, 17, 40, 100}).group_law <= 1e-13);
  CHECK(exactness(bounded, {0, 1, 3, 17, 40, 100}).group_law >= 1e-6);  // tau(s) + tau(t) != tau(s + t)
  // The rate is eta, not 1/L: G(Dp) = exp(Dp J), J = (-gamma - i w) I + eta N_3 (Eigen's Pade exponential).
  JordanBlock b;
  b.m = 3;
  b.gamma = gamma;
  b.omega = -w;
  b.eta = eta;
  for (double d : {0.3, 5.0, 80.0}) {  // as the eta = 1/L test above: Pade's error grows with |d J|
    const Eigen::MatrixXd expected = (d * jordan_generator(b)).exp();
    CHECK((G(raw, d) - expected).norm() <= 1e-12 * expected.norm());
  }
  // Block (0, 1) of the 6 x 6 operator is c_1 R(-w Dp), c_1 = e^{-gamma Dp} eta tau; block (0, 2) c_2 with
  // (eta tau)^2/2; tau = Dp (raw) or Dp/(1 + |Dp|/L) (bounded, Jordan-RoPE).
  for (double d : {0.0, 1.0, 37.0, 500.0, -250.0, 4095.0}) {
    CAPTURE(d);
    for (const Encoding* e : {&raw, &bounded}) {
      const double tau = e == &bounded ? d / (1 + std::abs(d) / 1024) : d;
      const Eigen::Matrix2d R = rotation(-w * d);
      const double c1 = std::exp(-gamma * d) * eta * tau, c2 = std::exp(-gamma * d) * (eta * tau) * (eta * tau) / 2;
      const Eigen::MatrixXd g = G(*e, d);
      // A few roundings on entries of size |c_p|: 1e-14 relative to max(|c_p|, tiny).
      CHECK((g.block<2, 2>(0, 2) - c1 * R).norm() <= 1e-14 * std::max(std::abs(c1), 1e-300));
      CHECK((g.block<2, 2>(0, 4) - c2 * R).norm() <= 1e-14 * std::max(std::abs(c2), 1e-300));
      CHECK((g.block<2, 2>(2, 4) - c1 * R).norm() <= 1e-14 * std::max(std::abs(c1), 1e-300));
    }
  }
}

TEST_CASE("jordan eta: where eta |Dp| overflows the bounded shear eta tau(Dp), tau = Dp/(1 + Dp/L), stays finite") {
  // Jordan-RoPE's shear eta tau(Dp): tau <= L, so eta tau = 1e300 * 1e10/(1 + 1e10/1000) ~ 1e303 (finite) although
  // eta |Dp| = 1e310 is inf in float64 (before issue 20 item 1 the shear was eta Dp/(1 + eta Dp) -> 1).
  const Encoding e = parse_encoding("jordan:m=2,gamma=0,tau=bounded,L=1000,eta=1e300,freqs=[1]");
  const std::vector<double> lag{1e10};
  const double that = 1e300 * (1e10 / (1 + 1e10 / 1000));
  const Eigen::MatrixXd g = relative_operator(e, lag);
  // c_1 = eta tau: the off-diagonal block is c_1 R(-Dp).
  const Eigen::Matrix2d r = rotation(-1e10);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) CHECK(g(i, 2 + k) == doctest::Approx(that * r(i, k)).epsilon(1e-12));
  Lags l(1, 1);
  l(0, 0) = 1e10;
  const auto f = features(e, l);
  CHECK(f.values(0, 3) == doctest::Approx(that * std::cos(1e10)).epsilon(1e-12));  // column that E C_0
}

TEST_CASE("registry: every family's record parses its example to that family, lists it and round-trips it") {
  REQUIRE(family_infos().size() == std::variant_size_v<EncodingValue>);
  std::size_t lines = 0;
  for (const auto* info : family_infos()) {
    CAPTURE(info->name);
    const Encoding e = parse_encoding(info->example);
    CHECK(family_name(e) == info->name);
    CHECK(&family_info(e) == info);
    const std::string canon = spelling(e);
    CHECK(spelling(parse_encoding(canon)) == canon);
    CHECK_FALSE(info->list.empty());
    lines += info->list.size();
    REQUIRE_FALSE(info->parsers.empty());
    // Traits agree with the record: has_frequencies for every value of an "always" family, never for "never".
    if (info->rotary == Rotary::always) CHECK(has_frequencies(e));
    if (info->rotary == Rotary::never) CHECK_FALSE(has_frequencies(e));
    // Every name the record parses from is known to the parser, and the listed ones are named when one is not.
    for (const auto& p : info->parsers) {
      CAPTURE(p.name);
      try {
        (void)parse_encoding(std::string(p.name) + ":no_such_key=1");
        FAIL("no_such_key accepted");
      } catch (const InputError& err) {
        CHECK(std::string(err.what()).find("encoding family =") == std::string::npos);
      }
    }
  }
  CHECK(encoding_families().size() == lines);
  try {
    (void)parse_encoding("no-such-family");
    FAIL("no-such-family accepted");
  } catch (const InputError& err) {
    CHECK(std::string(err.what()) ==
          "encoding: encoding 'no-such-family': encoding family = 'no-such-family' (must be one of rope, rope-freqs, "
          "rope-matched, xpos, rf-rope, damped, jordan, jordan-scaled, real-jordan, alibi, poly, nope, rope-alibi, "
          "direct-sum, direct-sum-poly, nd, sinusoidal, or a fixed-basis reference name (ropekit list methods))");
  }
  CHECK(rotary_families() ==
        "rope, rope-freqs, rope-matched, xpos, rf-rope, damped, jordan, jordan-scaled, sinusoidal, nd with torus "
        "generators, or a direct sum with one of them");
}

TEST_CASE("registry: every family's 1-D relative example is in the contract's spellings") {
  for (const auto* info : family_infos()) {
    CAPTURE(info->name);
    const Encoding e = parse_encoding(info->example);
    const bool in_contract = std::find(kSpellings.begin(), kSpellings.end(), info->example) != kSpellings.end();
    CHECK(in_contract == (is_relative(e) && lag_dims(e) == 1));
  }
}

TEST_CASE("operator_dim and encoding_size come from the parameters and equal the assembled G's size") {
  // Independent route: G itself (relative_operator assembles every block) at lag 0.
  for (const auto& text : ropekit::test::kContractSpellings) {
    CAPTURE(text);
    const Encoding e = parse_encoding(text);
    if (!is_relative(e) || lag_dims(e) != 1) continue;
    const std::vector<double> zero{0.0};
    const auto n = relative_operator(e, zero).rows();
    CHECK(operator_dim(e) == n);
    CHECK(encoding_size(e).n == static_cast<double>(n));
  }
  // dim 2^24 at once (the fuzz corpus' seed-large-dim took seconds when blocks were assembled), and a size past an
  // int refused.
  CHECK(operator_dim(parse_encoding("rope:dim=16777216,base=1e4")) == 16777216);
  CHECK(encoding_size(parse_encoding("rope:dim=16777216,base=1e4")).freqs == 8388608);
  CHECK_THROWS_AS(operator_dim(parse_encoding("direct-sum:[rope(dim=1073741824),rope(dim=1073741824),rope(dim=1073741824)]")),
                  InputError);
}
