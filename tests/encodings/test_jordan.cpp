// Issue 20 items 1-3, against values written out by hand: Jordan's stabilized shear eta tau(d), tau(d) = d/(1 + d/L)
// (Jordan-RoPE) for any eta; the scheme's attention factor a^2 in every rotary family's G; LongRoPE's short and
// long factors chosen per lag (T = |lag| + 1) when no seq_len is given.

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/encoding.hpp"
#include "ropekit/fit/tunable.hpp"

using namespace ropekit;

namespace {

double cv(const std::string& spelling, double lag, double rho = 1, std::optional<double> seq_len = {}) {
  Lags l(1, 1);
  l(0, 0) = lag;
  return content_variance(parse_encoding(spelling), l, rho, seq_len)[0];
}

double kern(const std::string& spelling, double lag) {
  Lags l(1, 1);
  l(0, 0) = lag;
  return kernel(parse_encoding(spelling), l)[0];
}

bool close(double a, double b, double rel = 1e-12) { return std::abs(a - b) <= rel * std::max(1.0, std::abs(b)); }

}  // namespace

TEST_CASE("jordan tau=bounded with eta: the shear is eta d/(1 + d/L) in the operator, the features and fit-params") {
  // m = 2, gamma = 0, one frequency theta = 1: G = [[R, s R], [0, R]] with R = R(-d), so for rho = 1
  // ||G||^2 + tr(G^2) = 4 + 2 s^2 + 4 cos(2d). Before the fix s was eta d/(1 + eta d): 7.0212 at d = 10.
  const std::string j = "jordan:m=2,gamma=0,tau=bounded,L=100,eta=0.5,dim=2,base=1e4";
  for (double d : {1.0, 10.0, 1e3}) {
    CAPTURE(d);
    const double s = 0.5 * d / (1 + d / 100);
    CHECK(close(cv(j, d), 4 + 2 * s * s + 4 * std::cos(2 * d)));
  }
  CHECK(std::abs(cv(j, 10) - 46.955) < 5e-4);  // the documented value
  // Features: 1, C, S, s C, s S (p < m = 2).
  Lags l(2, 1);
  l << 10, 1e3;
  const auto f = features(parse_encoding(j), l);
  REQUIRE(f.values.cols() == 5);
  for (Eigen::Index i = 0; i < 2; ++i) {
    const double d = l(i, 0), s = 0.5 * d / (1 + d / 100);
    CHECK(close(f.values(i, 3), s * std::cos(d)));
    CHECK(close(f.values(i, 4), s * std::sin(d)));
  }
  // fit-params' tunable row with eta free, at eta = 0.5: the same columns.
  const auto t = make_tunable(parse_encoding(j), {"eta"}, Where("test"));
  REQUIRE(t.n_params() == 1);
  const Eigen::VectorXd p = Eigen::VectorXd::Constant(1, 0.5);
  const auto v = tunable_values<double>(t, p.data());
  std::vector<double> row(static_cast<std::size_t>(t.n_features()));
  tunable_row(t, v, 10.0, row.data());
  const double s = 0.5 * 10 / 1.1;
  CHECK(close(row[3], s * std::cos(10.0)));
  CHECK(close(row[4], s * std::sin(10.0)));
  // eta = 1/L is the unsized definition, unchanged.
  CHECK(close(cv("jordan:m=2,gamma=0,tau=bounded,L=100,eta=0.01,dim=2,base=1e4", 10),
              cv("jordan:m=2,gamma=0,tau=bounded,L=100,dim=2,base=1e4", 10)));
}

TEST_CASE("the scheme's attention factor a^2 scales G in jordan, jordan-scaled and rope-matched as in rope") {
  const std::string yarn = "scaling=yarn(factor=4,orig=64,attention_factor=0.5)";
  const double a = frequencies(parse_encoding("rope:dim=4,base=1e4," + yarn)).attention_factor;
  REQUIRE(a == 0.5);
  for (const std::string& scheme : {yarn, std::string("scaling=yarn(factor=8,orig=64)"),
                                   std::string("scaling=longrope(short=[1,2],long=[4,8],orig=64,max=256)")}) {
    CAPTURE(scheme);
    const auto ft = frequencies(parse_encoding("rope:dim=4,base=1e4," + scheme), 10.0);
    const double a2 = ft.attention_factor * ft.attention_factor;
    const std::string freqs = "freqs=[" + format_number(ft.theta(0, 0)) + "," + format_number(ft.theta(1, 0)) + "]";
    for (double d : {3.0, 7.5}) {
      CAPTURE(d);
      // rope, dim 4: G = a^2 (R(-theta_0 d) (+) R(-theta_1 d)); rho = 1: a^4 (4 + 2 cos 2 theta_0 d + 2 cos 2 theta_1 d).
      const double rope = a2 * a2 * (4 + 2 * std::cos(2 * ft.theta(0, 0) * d) + 2 * std::cos(2 * ft.theta(1, 0) * d));
      CHECK(close(cv("rope:dim=4,base=1e4," + scheme, d), rope));
      // At m = 1 (gamma = 0) and k = 1 the families are rope (jordan-scaled has m >= 2: checked below).
      CHECK(close(cv("jordan:m=1,gamma=0,tau=raw,L=64,dim=4,base=1e4," + scheme, d), rope));
      CHECK(close(cv("rope-matched:k=1,dim=4,base=1e4," + scheme, d), rope));
      // At m = 2: a^4 times the same family on the scheme's frequencies without a scheme.
      CHECK(close(cv("jordan:m=2,gamma=0.01,tau=bounded,L=64," + scheme + ",dim=4,base=1e4", d),
                  a2 * a2 * cv("jordan:m=2,gamma=0.01,tau=bounded,L=64," + freqs, d)));
      CHECK(close(cv("jordan-scaled:m=2,c=0.5,L=64,dim=4,base=1e4," + scheme, d),
                  a2 * a2 * cv("jordan-scaled:m=2,c=0.5,L=64," + freqs, d)));
    }
  }
}

TEST_CASE("longrope without seq_len: short factors while T = |lag| + 1 <= orig, long factors past it") {
  // dim 4, base 1e4: theta = 1, 1e-2 divided by short [1, 2] or long [4, 8]; the kernel is the mean of the cosines.
  const std::string e = "rope:dim=4,base=1e4,scaling=longrope(short=[1,2],long=[4,8],orig=64,max=256)";
  for (double d : {10.0, 63.0, 64.0, 1000.0}) {
    CAPTURE(d);
    const bool is_long = d + 1 > 64;
    const double t0 = 1.0 / (is_long ? 4 : 1), t1 = 1e-2 / (is_long ? 8 : 2);
    CHECK(close(kern(e, d), (std::cos(t0 * d) + std::cos(t1 * d)) / 2));
    // LongRoPE's attention factor sqrt(1 + ln(max/orig)/ln(orig)) in either regime.
    const double a2 = 1 + std::log(4.0) / std::log(64.0);
    CHECK(close(cv(e, d), a2 * a2 * (4 + 2 * std::cos(2 * t0 * d) + 2 * std::cos(2 * t1 * d))));
  }
  // An explicit seq_len still picks one regime for every lag.
  const double a2 = 1 + std::log(4.0) / std::log(64.0);
  CHECK(close(cv(e, 1000, 1, 10.0), a2 * a2 * (4 + 2 * std::cos(2 * 1000.0) + 2 * std::cos(2 * 5e-3 * 1000))));
}
