// The Monte Carlo engine (lib/ropekit/mc/monte_carlo.hpp): mergeable moments, numbers independent of the
// thread count, the grid (angle-addition) path against the direct path, and its error handling.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/mc/monte_carlo.hpp"
#include "ropekit/core/rng.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::test_seed;
using ropekit::test::z_bound;

namespace {

Eigen::MatrixXd column(std::vector<double> v) {
  return Eigen::Map<Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

bool identical(const Moments& a, const Moments& b) {
  return a.n == b.n && a.mean == b.mean && a.M2 == b.M2 && a.M3 == b.M3 && a.M4 == b.M4;
}
}  // namespace

TEST_CASE("Moments: add and merge in any split equal two-pass central moments") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  Rng rng(seed, 9);
  std::vector<double> x(1000);
  for (double& v : x) v = 5 + 2 * rng.normal() + rng.uniform();
  double mean = 0;
  for (double v : x) mean += v / static_cast<double>(x.size());
  double m2 = 0, m3 = 0, m4 = 0;
  for (double v : x) {
    const double d = v - mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  for (std::size_t split : {1u, 100u, 500u, 999u}) {
    Moments a, b;
    for (std::size_t i = 0; i < split; ++i) a.add(x[i]);
    for (std::size_t i = split; i < x.size(); ++i) b.add(x[i]);
    a.merge(b);
    CAPTURE(split);
    CHECK(a.n == 1000);
    CHECK(a.mean == doctest::Approx(mean).epsilon(1e-14));
    CHECK(a.M2 == doctest::Approx(m2).epsilon(1e-12));  // sums of 1000 terms: ~1e-13 relative
    CHECK(a.M3 == doctest::Approx(m3).epsilon(1e-9).scale(m2));
    CHECK(a.M4 == doctest::Approx(m4).epsilon(1e-12));
  }
  // se(s^2) of normal data is sqrt(2/(n-1)) sigma^2: the fourth-moment estimate is close for n = 1000.
  Moments z;
  for (int i = 0; i < 20000; ++i) z.add(rng.normal());
  CHECK(z.stderr_variance() == doctest::Approx(std::sqrt(2.0 / 19999)).epsilon(0.05));  // sampling error of m4 ~ 3%
}

TEST_CASE("the same seed gives bit-identical moments with 1 and 2 threads, on every SIMD path") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  struct Case {
    const char* spectrum;
    Sampling sampling;
    Eigen::MatrixXd lags;
  };
  Eigen::MatrixXd lags2(3, 2);
  lags2 << 0, 0, 1, 0.5, -2, 3;
  std::vector<double> grid;
  for (int i = 0; i < 40; ++i) grid.push_back(0.25 * i);
  const std::vector<Case> cases = {
      {"cauchy:b=4", Sampling::iid, column({0, 0.5, 1, 2, 4})},
      {"matern:nu=0.8,l=2", Sampling::antithetic, column({0.3, 3})},
      {"gaussian:sigma=0.5", Sampling::stratified, column(grid)},
      {"exponential:l=1,dims=2", Sampling::iid, lags2},
  };
  struct Restore {  // the path active before, even when a REQUIRE fails
    SimdPath saved = simd_path();
    ~Restore() { set_simd_path(saved); }
  } restore;
  std::vector<std::pair<SimdPath, const Case*>> runs;
  for (SimdPath p : supported_simd_paths())
    for (const auto& k : cases) runs.emplace_back(p, &k);
  for (const auto& run : runs) {
    const SimdPath path = run.first;
    const Case& c = *run.second;
    set_simd_path(path);
    CAPTURE(simd_path_name(path));
    CAPTURE(c.spectrum);
    const Spectrum s = parse_spectrum(c.spectrum);
    const Coefficients coef = coefficients(make_content(ContentKind::random, 24, seed));
    McOptions o;
    o.trials = 3000;  // 12 chunks: both threads get several
    o.seed = seed;
    o.sampling = c.sampling;
    o.threads = 1;
    const auto one = score_moments(s, coef, c.lags, o);
    o.threads = 2;
    const auto two = score_moments(s, coef, c.lags, o);
    REQUIRE(one.size() == two.size());
    for (std::size_t l = 0; l < one.size(); ++l) CHECK(identical(one[l], two[l]));
    o.seed = seed + 1;
    CHECK_FALSE(identical(score_moments(s, coef, c.lags, o)[1], one[1]));
  }
}

TEST_CASE("an evenly spaced lag grid (angle-addition recurrence) gives the same scores as shuffled lags (direct sincos)") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const Spectrum s = parse_spectrum("gaussian:sigma=3");
  const Coefficients coef = coefficients(make_content(ContentKind::random, 40, seed));
  std::vector<double> grid;
  for (int i = 0; i < 64; ++i) grid.push_back(-8 + 0.5 * i);
  std::vector<double> shuffled = grid;
  std::reverse(shuffled.begin() + 10, shuffled.begin() + 30);  // no longer evenly spaced
  McOptions o;
  o.trials = 600;
  o.seed = seed;
  const auto a = score_moments(s, coef, column(grid), o);
  const auto b = score_moments(s, coef, column(shuffled), o);
  const double mag = coef.A.cwiseAbs().sum() + coef.B.cwiseAbs().sum();
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const std::size_t j = static_cast<std::size_t>(std::find(shuffled.begin(), shuffled.end(), grid[i]) - shuffled.begin());
    CAPTURE(grid[i]);
    // Same frequencies, different rounding: recurrence drift <= ~100 eps per term (see test_vecmath).
    CHECK(std::abs(a[i].mean - b[j].mean) <= 100 * 2.2e-16 * mag);
    CHECK(std::abs(a[i].variance() - b[j].variance()) <= 1e-9 * (a[i].variance() + 1e-300) + 1e-20);
  }
}

TEST_CASE("decimal lags 0.1,...,6.4 (a grid up to rounding) give the direct path's scores within the derived bound") {
  const std::uint64_t seed = test_seed();
  CAPTURE(seed);
  const Spectrum s = parse_spectrum("gaussian:sigma=1");
  constexpr int D = 64;
  const Coefficients coef = coefficients(make_content(ContentKind::random, D, seed));
  std::vector<double> t;
  for (int i = 1; i <= 64; ++i) t.push_back(std::stod(std::to_string(i / 10) + "." + std::to_string(i % 10)));
  const auto near = near_grid(t);
  REQUIRE(near);  // so score_moments takes the grid path (trial by trial, when the shift bound allows)
  REQUIRE(near->delta > 0);
  McOptions o;
  o.trials = 600;
  o.seed = seed;
  const auto grid = score_moments(s, coef, column(t), o);
  o.threads = 1;
  const auto grid1 = score_moments(s, coef, column(t), o);
  // Per-trial bound on |S_grid(g_m) - S_direct(t_m)| in units of eps sum_i (|A_i| + |B_i|), each term derived:
  const double mag = coef.A.cwiseAbs().sum() + coef.B.cwiseAbs().sum(), eps = 0x1p-52;
  const double w_max = 6;                                   // |w| <= 6 sigma: P(beyond) 2e-9 per draw, 4e4 draws
  const double recurrence = std::sqrt(2.0) * (2.0 * kAnchor + 4);  // vecmath's contract on the rotated A', B'
                                                            // (|A'| + |B'| <= sqrt 2 (|A| + |B|)), anchors' sincos
  const double rotation = 6;                                // A', B': sincos 1.5 ulp, a product and a sum each
  const double step_phase = (kAnchor - 1) * 0.1 * w_max / 2;  // h w rounded once (1/2 ulp), carried 31 steps
  const double shift = kNearGridBudget;                     // t to t0 + s: the guard in score_moments
  const double direct = 1.5 + 6.4 * w_max / 2;              // sincos (1.5 ulp) and t * w rounded (1/2 ulp)
  const double summation = 2 * (D / 8.0 + 3);               // 8 lanes of D/8 terms, then 3 levels, in each path
  const double E = (recurrence + rotation + step_phase + shift + direct + summation) * eps * mag;
  const double N = static_cast<double>(o.trials);
  bool any_differs = false;
  for (std::size_t m = 0; m < t.size(); ++m) {
    CAPTURE(t[m]);
    CHECK(identical(grid[m], grid1[m]));  // numbers independent of the threads on this path too
    const auto direct_m = score_moments(s, coef, column({t[m]}), o);  // one lag: the direct path, same draws
    CHECK(std::abs(grid[m].mean - direct_m[0].mean) <= E);
    // s^2 of values moved by at most E each: |d s^2| <= 2 s E sqrt(N / (N - 1)) + E^2 N / (N - 1) (Cauchy-Schwarz).
    CHECK(std::abs(grid[m].variance() - direct_m[0].variance()) <=
          2 * direct_m[0].sd() * E * std::sqrt(N / (N - 1)) + E * E * N / (N - 1));
    any_differs = any_differs || !identical(grid[m], direct_m[0]);
  }
  CHECK(any_differs);  // the grid path was taken: its rounding differs from the direct path's somewhere
}

TEST_CASE("the engine refuses what it cannot do, and reports progress") {
  const Coefficients coef = coefficients(make_content(ContentKind::random, 8, 1));
  McOptions o;
  o.trials = 1;
  CHECK_THROWS_AS(score_moments(parse_spectrum("gaussian"), coef, column({1}), o), InputError);
  o.trials = 100;
  Eigen::MatrixXd lags2(1, 2);
  lags2 << 1, 1;
  CHECK_THROWS_AS(score_moments(parse_spectrum("gaussian"), coef, lags2, o), InputError);  // k = 1 spectrum, 2-D lag
  o.sampling = Sampling::stratified;
  CHECK_THROWS_AS(score_moments(parse_spectrum("gaussian:dims=2"), coef, lags2, o), InputError);
  o.sampling = Sampling::iid;
  CHECK_THROWS_AS(score_moments(parse_spectrum("matern:nu=0.01"), coef, column({1}), o), InputError);
  // Cauchy-distributed frequencies (scale 1e5) times a lag of 1e308 overflow: an error, never a silent NaN.
  CHECK_THROWS_WITH_AS(score_moments(parse_spectrum("exponential:l=1e-5"), coef, column({1e308}), o),
                       doctest::Contains("not finite"), InputError);
  double last = 0;
  int calls = 0;
  o.trials = 2000;
  o.threads = 2;
  o.progress = [&](double f) {
    CHECK(f > 0);
    CHECK(f <= 1);
    last = std::max(last, f);
    ++calls;
  };
  score_moments(parse_spectrum("gaussian"), coef, column({1}), o);
  CHECK(calls == 8);  // one call per chunk of kTrialsPerChunk = 256
  CHECK(last == 1.0);
}

TEST_CASE("the Monte Carlo cost counts trials x blocks x lags angles and the moments' memory") {
  const Cost c = monte_carlo_cost(20000, 64, 5, 1, 2);
  CHECK(c.seconds == doctest::Approx(20000.0 * 64 * 5 / kAnglesPerSecond).epsilon(1e-15));
  CHECK(c.fits());
  // 2^20 blocks of 1024-D frequencies: 2.5 * 2^30 doubles per worker, 21 GB on 1 thread: over any budget here.
  CHECK(monte_carlo_cost(2, 1 << 20, 4, 1024, 1).bytes > 2e10);
  CHECK(!monte_carlo_cost(std::int64_t{1} << 40, 64, 5, 1, 2).fits());
  McOptions o;
  o.trials = 1;
  CHECK_THROWS_WITH_AS(o.validate(Where::options("ropekit verify master")),
                       "ropekit verify master: --trials = 1 (must be an integer in [2, 1099511627776])", InputError);
}
