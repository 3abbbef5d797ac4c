// The requests of the commands (issue 19): validated in the library, so the command line and the Python module,
// which only bind options to them, refuse the same inputs with the same messages.
#include <cmath>
#include <limits>

#include <doctest/doctest.h>

#include "ropekit/core/error.hpp"
#include "ropekit/commands/features_request.hpp"
#include "ropekit/commands/frequencies_request.hpp"
#include "ropekit/commands/kernel_request.hpp"
#include "ropekit/fit/fit_config.hpp"
#include "ropekit/commands/verify_request.hpp"

using namespace ropekit;

TEST_CASE("kernel request: checks, default lags, rows") {
  KernelRequest r;
  r.encodings = {"rope:dim=8"};
  const KernelPlan p = plan_kernel(r);
  CHECK(p.k == 1);
  CHECK(p.any_plain);
  CHECK_FALSE(p.any_rf);
  const Lags lags = kernel_lags(r, p);
  CHECK(lags.rows() == 5);  // 0,1,10,100,1000
  const auto rows = kernel_block(r, p, 0, lags);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].kernel == doctest::Approx(1));
  r.rho = 2;
  CHECK_THROWS_WITH_AS(plan_kernel(r), "ropekit kernel: --rho = 2 (must be in [-1, 1])", InputError);
  r.rho = 1;
  r.encodings = {"sinusoidal:dim=8"};
  CHECK_THROWS_WITH_AS(plan_kernel(r), doctest::Contains("a relative encoding"), InputError);
  r.encodings = {"nd:family=axial,dim=8,axes=2"};
  CHECK_THROWS_WITH_AS(plan_kernel(r), doctest::Contains("--lags = (missing)"), InputError);
  r.lags_given = true;
  CHECK(plan_kernel(r).k == 2);
  r.encodings = {"rope:dim=8", "nd:family=axial,dim=8,axes=2"};
  CHECK_THROWS_WITH_AS(plan_kernel(r), doctest::Contains("encodings of one lag dimension"), InputError);
}

TEST_CASE("features request: causal lags, default 0:8") {
  FeaturesRequest r;
  r.encoding = "rope:dim=8";
  const FeaturesPlan p = plan_features(r);
  const Lags lags = feature_lags(r, p);
  CHECK(lags.rows() == 8);
  CHECK(feature_rows(r, p, lags).values.rows() == 8);
  r.lags_text = "-1,2";
  CHECK_THROWS_WITH_AS(feature_lags(r, p), "ropekit features: --lags = -1 (must be finite and >= 0 (causal lags))",
                       InputError);
}

TEST_CASE("frequencies request: convention, rows of a direct sum") {
  FrequenciesRequest r;
  r.encoding = "direct-sum:[rope(dim=4),rope(dim=8)]";
  r.float32 = true;
  const FrequenciesPlan p = plan_frequencies(r);
  CHECK(p.sum);
  const FrequencyRows f = frequency_rows(r, p);
  CHECK(f.index.size() == 6);
  CHECK(f.part.back() == 1);
  CHECK(f.theta32.size() == 1);
  r.convention = "onnx";
  CHECK_THROWS_WITH_AS(plan_frequencies(r), "ropekit frequencies: --convention = 'onnx' (must be huggingface or ggml)",
                       InputError);
  r.convention = "ggml";
  r.encoding = "alibi";
  CHECK_THROWS_WITH_AS(plan_frequencies(r), doctest::Contains("an encoding with rotary frequencies"), InputError);
}

TEST_CASE("kernel, features and frequencies requests: the budgets of the command line") {
  // Refused on the time cap of 2 h (core/budget.hpp), whatever the machine's memory: the vector route's 2 x 2^21
  // terms a lag of n = 2^22 at the conservative 5e7 a second are 84 ms (measured 3.7 ms with every column on
  // AVX-512), so 85,000 lags; 20000 were refused as 9.3 h when blocks were counted instead (issue 24's review).
  KernelRequest k;
  k.encodings = {"rope:dim=4194304"};
  const KernelPlan kp = plan_kernel(k);
  CHECK_NOTHROW(check_kernel_budget(k, kp, 20000, 20000));
  CHECK_THROWS_WITH_AS(check_kernel_budget(k, kp, 200000, 200000),
                       doctest::Contains("ropekit kernel: --lags = 200000 lags (must be at most"), InputError);
  CHECK(kernel_cost(kp, 5000, 10).seconds == kernel_cost(kp, 5000, 5000).seconds);
  CHECK(kernel_cost(kp, 5000, 10).bytes < kernel_cost(kp, 5000, 5000).bytes);  // a stream holds one block
  // Python holds float64 columns (8 bytes a cell, and the lag), not text rows (150 bytes a cell): 10^8 lags of a
  // 256-dim RoPE (7 columns: plain RoPE's three with the four) are 6.4 GB there, 105 GB as text (issue 24: it was
  // refused as text, or ran out of memory before the budget).
  KernelRequest py;
  py.encodings = {"rope:dim=256,base=1e4"};
  py.matrix = true;
  const KernelPlan pp = plan_kernel(py);
  const double block = kernel_cost(pp, 0, 0, true).bytes;
  CHECK(kernel_cost(pp, 1e8, 1e8, true).bytes - block == doctest::Approx(1e8 * 8 * 8));
  CHECK(kernel_cost(pp, 1e8, 1e8, false).bytes - block == doctest::Approx(1e8 * 7 * 150));

  FeaturesRequest f;
  f.encoding = "rope:dim=4194304";
  const FeaturesPlan fp = plan_features(f);
  CHECK_NOTHROW(check_features_budget(f, fp, 10));
  CHECK_THROWS_WITH_AS(check_features_budget(f, fp, 2000),
                       doctest::Contains("ropekit features: --lags = 2000 lags (must be at most"), InputError);
  f.format = "json";  // costlier cells
  CHECK(features_cost(f, fp, 10).seconds > 4 * features_cost(FeaturesRequest{}, fp, 10).seconds);
  // A float64 matrix (Python) costs its 8 bytes a cell and the basis's tables, not text: 2^20 lags of a 97-column
  // basis (issue 23's benchmark, 0.8 GB of result) is 1.6 GB, within any budget of this project's machines, and
  // 13 GB as text. 2000 lags of n = 2^22 are 134 GB either way.
  FeaturesRequest m;
  m.encoding = "rope:dim=96,base=1e4";
  m.matrix = true;
  const FeaturesPlan mp = plan_features(m);
  CHECK(features_cost(m, mp, 1 << 20).bytes == doctest::Approx(16.0 * 98 * (1 << 20)));
  CHECK(features_cost(FeaturesRequest{.encoding = m.encoding}, mp, 1 << 20).bytes >= 8 * features_cost(m, mp, 1 << 20).bytes);
  f.matrix = true;
  CHECK_THROWS_WITH_AS(check_features_budget(f, fp, 2000),
                       doctest::Contains("ropekit features: --lags = 2000 lags (must be at most"), InputError);

  FrequenciesRequest q;
  q.encoding = "rope:dim=8";
  CHECK_NOTHROW(check_frequencies_budget(q, plan_frequencies(q)));
  // No spelling reaches the time cap (at most 2^24 frequencies a part); on memory, the refusal names the encoding.
  q.encoding = "rope:dim=8,F=16777216";
  q.float32 = true;
  q.format = "json";
  const FrequenciesPlan qp = plan_frequencies(q);
  CHECK(frequencies_budget_rows(qp) == 16777216);
  const Cost c = frequencies_cost(q, qp, frequencies_budget_rows(qp));
  CHECK(c.bytes == doctest::Approx(16777216.0 * 5 * 256));
  if (c.fits())
    CHECK_NOTHROW(check_frequencies_budget(q, qp));
  else
    CHECK_THROWS_WITH_AS(check_frequencies_budget(q, qp),
                         doctest::Contains("ropekit frequencies: --encoding = 'rope:dim=8,F=16777216' (16777216 "
                                           "frequencies) (must be at most"),
                         InputError);
}

TEST_CASE("verify request: the content guard and the budget") {
  VerifyRequest r;
  r.spectrum = "cauchy:b=4";
  r.q = std::vector<double>{1e100, 1e100};
  r.k = std::vector<double>{1e100, 1e100};
  const VerifyPlan p = plan_verify(r);
  CHECK(p.lags.rows() == 5);
  CHECK_THROWS_WITH_AS(verify_content_of(r, "random", p.mc.trials),
                       doctest::Contains("the fourth moments of the scores must stay finite"), InputError);
  r.q = std::vector<double>{1, 2, 3};
  r.k = std::vector<double>{1, 2, 3};
  CHECK_THROWS_WITH_AS(verify_content_of(r, "random", p.mc.trials),
                       "ropekit verify master: --q = 3 numbers (must be an even count: 2 per block)", InputError);
  r.q.reset();
  r.k.reset();
  r.blocks = 1000000;
  r.trials = 1000000000;
  CHECK_THROWS_WITH_AS(verify_master(r), doctest::Contains("ropekit verify master: --trials = 1000000000 (must be at most"),
                       InputError);
  r.trials = 20000;
  r.blocks = 8;
  r.power = true;
  r.draw_from = "gaussian:sigma=1";
  CHECK_THROWS_WITH_AS(plan_verify(r),
                       "ropekit verify master: --draw-from = 'gaussian:sigma=1' (must be absent with --power (give one "
                       "of them))",
                       InputError);
}

TEST_CASE("fit options: their ranges, as the command line's parser states them") {
  FitOptions o;
  o.encodings = {"rope:dim=8"};
  o.basis.train_context = 0;
  o.eval_contexts = {16};
  CHECK_THROWS_WITH_AS(fit_config(o), "ropekit fit: --train-context = 0 (must be an integer in [1, 2147483647])",
                       InputError);
  o.basis.train_context = 16;
  o.seeds = {-1};
  CHECK_THROWS_WITH_AS(fit_config(o), "ropekit fit: --seed = -1 (must be an integer in [0, 9223372036854775807])",
                       InputError);
}

TEST_CASE("frequencies request: a zero frequency has wavelength inf; a tiny non-zero one is still refused") {
  // rf-rope's quantile grid with an odd number of blocks is symmetric about the median: the middle block has
  // theta = Phi^-1(1/2) = 0 (it was refused as "theta_3 = 0 is below 2 pi / DBL_MAX" while `kernel` took it).
  FrequenciesRequest r;
  r.encoding = "rf-rope:spectrum=gaussian(sigma=20),blocks=7";
  const FrequencyRows f = frequency_rows(r, plan_frequencies(r));
  REQUIRE(f.index.size() == 7);
  CHECK(f.theta[0][3] == 0.0);
  CHECK(f.wavelength[3] == std::numeric_limits<double>::infinity());  // 2 pi / 0: a zero frequency never repeats
  for (std::size_t i = 0; i < 7; ++i) {
    // the grid's symmetry (quantiles at (i + 1/2) / 7 of an even law), to the rounding of p and 1 - p in Q(p)
    CHECK(f.theta[0][i] == doctest::Approx(-f.theta[0][6 - i]).epsilon(1e-14));
    // the others: 2 pi / |theta|, one rounding of the division
    if (i != 3) CHECK(f.wavelength[i] == doctest::Approx(2 * 3.141592653589793 / std::abs(f.theta[0][i])).epsilon(1e-15));
  }
  // theta = 5e-324 > 0: its wavelength 2 pi / theta passes DBL_MAX; refused as before (issue 20 item 12)
  r.encoding = "rope-freqs:freqs=[1,5e-324]";
  CHECK_THROWS_WITH_AS(frequency_rows(r, plan_frequencies(r)), doctest::Contains("theta_1 = 5e-324 is below"),
                       InputError);
}
