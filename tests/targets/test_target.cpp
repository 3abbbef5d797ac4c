// Targets of spec fixed-basis.md section 3, each against its formula written out here.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "ropekit/core/error.hpp"
#include "targets/target.hpp"

using namespace ropekit;

namespace {

TargetParams structured_params() {
  TargetParams p;  // the paper's Table 11 run
  p.base = 1e4;
  p.head_dim = 64;
  p.train_context = 1024;
  p.gamma = 1e-4;
  p.freq_index = 3;
  p.second_freq_index = 5;
  p.scaled_c = 0.1;
  p.drift_eps = 5e-5;
  return p;
}

}  // namespace

TEST_CASE("every target equals its formula at lags 0 .. 8191") {
  const TargetParams p = structured_params();
  const double w = std::pow(1e4, -6.0 / 64), w2 = std::pow(1e4, -10.0 / 64), L = 1024;
  struct Case {
    const char* name;
    std::function<double(double)> y;
  };
  const std::vector<Case> cases = {
      {"phase", [&](double d) { return std::cos(w * d); }},
      {"linear", [&](double d) { return -d / L; }},
      {"mixed", [&](double d) { return d / L * std::cos(w * d); }},
      {"phase_drift", [&](double d) { return std::cos(w * (1 + 5e-5) * d); }},
      {"seasonal_trend", [&](double d) { return (0.35 + 0.9 * d / L) * std::cos(w * d) + 0.25 * std::sin(w * d); }},
      {"damped_wave",
       [&](double d) { return std::exp(-1e-4 * d) * (std::cos(w * d) + 0.75 * d / L * std::sin(w * d)); }},
      {"rhythm_envelope",
       [&](double d) { return (0.25 + 0.85 * d / L) * (0.65 * std::cos(w * d) + 0.35 * std::sin(w2 * d)); }},
      {"motif_spacing",
       [&](double d) { return (d / L / (1 + 0.25 * d / L)) * (0.7 * std::cos(w2 * d) - 0.3 * std::sin(w2 * d)); }},
      {"high_jet_r1", [&](double d) { return d / L * std::cos(w * d); }},
      {"high_jet_r3", [&](double d) { return std::pow(d / L, 3) * std::cos(w * d); }},
      {"high_jet_r7", [&](double d) { return std::pow(d / L, 7) * std::cos(w * d); }},
      // Integer powers by repeated squaring (target.cpp int_power): every bit pattern, up to 64.
      {"high_jet_r5", [&](double d) { return std::pow(d / L, 5) * std::cos(w * d); }},
      {"high_jet_r64", [&](double d) { return std::pow(d / L, 64) * std::cos(w * d); }},
      {"scaled_high_jet_r6", [&](double d) { return std::pow(d / L, 6) * std::exp(-0.1 * d / L) * std::cos(w * d); }},
      {"scaled_high_jet_r1", [&](double d) { return d / L * std::exp(-0.1 * d / L) * std::cos(w * d); }},
      {"scaled_high_jet_r2", [&](double d) { return std::pow(d / L, 2) * std::exp(-0.1 * d / L) * std::cos(w * d); }},
      {"scaled-high-jet:r=2,c=0.5",
       [&](double d) { return std::pow(d / L, 2) * std::exp(-0.5 * d / L) * std::cos(w * d); }},
      {"phase:idx=0", [&](double d) { return std::cos(d); }},
      {"high-jet:r=2,idx=5", [&](double d) { return std::pow(d / L, 2) * std::cos(w2 * d); }},
  };
  const Eigen::VectorXd lags = Eigen::VectorXd::LinSpaced(8192, 0, 8191);
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const Eigen::VectorXd y = target_values(parse_target(c.name), p, lags);
    double worst = 0;
    for (Eigen::Index i = 0; i < lags.size(); ++i)
      worst = std::max(worst, std::fabs(y[i] - c.y(lags[i])) / std::max(1.0, std::fabs(c.y(lags[i]))));
    // 1-ulp trig (SLEEF vs glibc) and a few roundings in the envelope: ~1e-15 relative.
    CHECK(worst <= 1e-14);
  }
}

TEST_CASE("toy and structured default target lists are the reference's") {
  CHECK(toy_targets() == std::vector<std::string>{"phase", "linear", "mixed"});
  CHECK(structured_targets().size() == 10);
  CHECK(structured_targets().front() == "phase_drift");
  CHECK(structured_targets().back() == "scaled_high_jet_r3");
}

TEST_CASE("a target that needs a missing frequency index is rejected with the key to set") {
  TargetParams p = structured_params();
  p.second_freq_index.reset();
  try {
    check_target_params(parse_target("motif_spacing"), p, "motif_spacing");
    FAIL("motif_spacing needs second_freq_index");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("second_freq_index") != std::string::npos);
  }
  CHECK_NOTHROW(check_target_params(parse_target("motif-spacing:idx2=2"), p, "motif-spacing:idx2=2"));
  CHECK_NOTHROW(check_target_params(parse_target("linear"), TargetParams{}, "linear"));
}

TEST_CASE("unknown or malformed targets throw InputError") {
  for (const char* bad : {"", "phasee", "high_jet_r0", "high_jet_r", "high_jet_rx", "scaled_high_jet_r-1",
                          "high-jet", "high-jet:r=0", "phase:idx=-1", "phase:foo=1", "scaled-high-jet:r=1,c=nan"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_target(bad), InputError);
  }
}

TEST_CASE("x^r e^{-cx} where e^{-cx} underflows is still the product, and overflowing jets are refused") {
  // scaled-high-jet r = 64, c = 1, L = 1 at lag 1000: e^{-1000} underflows, x^64 = 1e192; the product is
  // e^{64 ln 1000 - 1000} cos(omega 1000) ~ 1e-242. Reference in long double; tolerance 1e-12 (the exponent
  // 558 carries ~558 eps of rounding).
  TargetParams p = structured_params();
  p.train_context = 1;
  const Target t = parse_target("scaled-high-jet:r=64,c=1,idx=0");  // omega = 1
  const Eigen::VectorXd y = target_values(t, p, Eigen::VectorXd::Constant(1, 1000.0));
  const long double want = std::exp(64 * std::log(1000.0L) - 1000.0L) * std::cos(1000.0L);
  CHECK(y[0] == doctest::Approx(static_cast<double>(want)).epsilon(1e-12));
  CHECK(y[0] != 0);
  // high_jet_r64 at x = 1e5: x^64 = 1e320 is not a float64; refused, never inf.
  CHECK_THROWS_WITH_AS(target_values(parse_target("high_jet_r64"), p, Eigen::VectorXd::Constant(1, 1e5)),
                       doctest::Contains("lag = 100000 (must be at most 62747.5"), InputError);
  // phase_drift with eps = 1e308: omega (1 + eps) d is not a float64 for d >= 1.
  CHECK_THROWS_WITH_AS(target_values(parse_target("phase-drift:eps=1e308,idx=0"), p, Eigen::VectorXd::Constant(1, 2.0)),
                       doctest::Contains("drift_relative_eps = 1e+308"), InputError);
}
