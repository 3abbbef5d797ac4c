// `ropekit fit --encoding` (issue 7: any encoding fits any target), with and without a config: exactness where
// the target is a column of the basis, a property of frequency scaling, the same rows and formats as
// `fit --config`, and bad input refused with one line naming the option or key.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "reports/fit_rows.hpp"
#include "reports/table.hpp"
#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;
using ropekit::test::source_path;

namespace {

using ropekit::test::check_rejected;

std::vector<ropekit::FitRow> rows_of(const std::string& csv) {
  return ropekit::read_fit_rows(ropekit::parse_csv(csv, "stdout"), "stdout");
}

const ropekit::FitRow& row(const std::vector<ropekit::FitRow>& rows, const std::string& method,
                           const std::string& split, int context) {
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const ropekit::FitRow& r) {
    return r.method == method && r.split == split && r.context == context;
  });
  REQUIRE(it != rows.end());
  return *it;
}


}  // namespace

TEST_CASE("fit --encoding rope --target phase: the target is a column of the basis, so the fit is exact") {
  // phase = cos(omega d), omega = theta^(-2 idx/h) with idx = --target-freq-index (default 3), theta = 1e4,
  // h = --head-dim (default 64): the column cos3 of rope:dim=64,F=16 (omega_k = 1e4^(-2k/64), k < 16).
  {
    // The run: L = 64. The 16 frequencies over 64 lags are numerically rank 26 of 33 (the lowest,
    // 1e4^(-30/64) = 0.013, turns 0.85 rad in 64 lags), and the ridge 1e-4 prefers a combination of smaller
    // norm than the exact weight 1 on cos3: training R^2 is 1 to 1e-10, but the extrapolation to 128 is only
    // good to about 1e-6 in MSE.
    const auto r = run_ropekit("fit --encoding rope:dim=64,F=16 --target phase --train-context 64 --eval-contexts 128");
    REQUIRE(r.exit_code == 0);
    const auto rows = rows_of(r.out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].method == "rope:dim=64,F=16");
    CHECK(rows[0].n_features == 33);
    CHECK(rows[0].n_train == 64);
    CHECK(std::fabs(1 - row(rows, "rope:dim=64,F=16", "train", 64).r2) <= 1e-10);
    CHECK(row(rows, "rope:dim=64,F=16", "eval", 128).mse <= 1e-5);
  }
  {
    // Well posed (L = 1024: cond 3.78) and without the ridge's shrinkage: the weights are e_cos3 to rounding,
    // and the MSE is at rounding level on the training lags and beyond them.
    const auto r = run_ropekit("fit --encoding rope:dim=64,F=16 --target phase --train-context 1024 "
                               "--eval-contexts 2048,8192 --ridge 0");
    REQUIRE(r.exit_code == 0);
    const auto rows = rows_of(r.out);
    REQUIRE(rows.size() == 3);
    CHECK(std::fabs(1 - rows[0].r2) <= 1e-14);
    CHECK(rows[0].rank == 33);
    for (const auto& x : rows) CHECK(x.mse <= 1e-28);
  }
}

TEST_CASE("YaRN moves the target's frequency out of the grid, so it fits phase worse than plain rope") {
  // YaRN (factor 4, orig 64) on dim 64, base 1e4: correction dims d(32) < 0 -> low = 0 and d(1) = 8.07 -> high = 9,
  // so frequency i < 9 becomes theta_i (1 - r_i + r_i/4) with ramp r_i = i/9. The target's omega = theta_3 (idx 3,
  // wavelength 15 lags) becomes 0.75 theta_3 and no scaled frequency equals theta_3 (the neighbours are 0.83 theta_2
  // = 1.11 theta_3 and 0.67 theta_4 = 0.50 theta_3). Over 1024 lags cos(theta_3 d) is nearly orthogonal to every
  // scaled column (their frequencies differ from theta_3 by far more than 2 pi / 1024), so the fit explains almost
  // nothing, and its error grows beyond the training lags. Plain rope has the column itself.
  const auto r = run_ropekit(
      "fit --encoding rope:dim=64 'rope:dim=64,scaling=yarn(factor=4,orig=64)' --target phase --train-context 1024 "
      "--eval-contexts 1024,8192");
  REQUIRE(r.exit_code == 0);
  const auto rows = rows_of(r.out);
  const std::string yarn = "rope:dim=64,scaling=yarn(factor=4,orig=64)";
  for (int T : {1024, 8192}) {
    CAPTURE(T);
    const auto& plain = row(rows, "rope:dim=64", "eval", T);
    const auto& scaled = row(rows, yarn, "eval", T);
    CHECK(plain.mse <= 1e-10);  // the ridge 1e-4 shrinks the weight of cos3 slightly (cond 1.2e8)
    CHECK(scaled.mse >= 1e6 * plain.mse);
    CHECK(scaled.r2 < 0.01);  // cos(theta_3 d) is nearly orthogonal to every scaled column over 1024 lags
  }
  CHECK(row(rows, yarn, "eval", 8192).mse > row(rows, yarn, "eval", 1024).mse);  // worse beyond the training lags
}

TEST_CASE("fit from options prints exactly what fit --config prints for the same run, in every format") {
  const std::string toy = source_path("configs/paper-table3-toy.yaml");
  // The toy config: seeds 0,1,2, L = 1024, contexts 1024..8192, F = 16, h = 64, theta 1e4, gamma 1e-4, idx 3.
  const std::string run = "--methods rope --encoding jordan_m3 'direct-sum:[rope,alibi]' --targets phase mixed";
  for (const char* format : {"csv", "md", "json", "latex"}) {
    CAPTURE(format);
    const auto a = run_ropekit("fit --config '" + toy + "' " + run + " --format " + format);
    const auto b = run_ropekit("fit " + run + " --train-context 1024 --eval-contexts 1024,2048,4096,8192 --seed 0,1,2 "
                               "--format " + std::string(format));
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    CHECK(a.out == b.out);
    CHECK(a.out.find("direct-sum:[rope,alibi]") != std::string::npos);
  }
  // The same columns as every fit; 3 seeds x 2 targets x 3 bases x (train + 4 contexts).
  const auto c = run_ropekit("fit " + run + " --train-context 1024 --eval-contexts 1024,2048,4096,8192 --seed 0,1,2");
  CHECK(c.out.rfind("seed,target,method,context,split,n_features,n_train,mse,r2,cond,rank\n", 0) == 0);
  CHECK(rows_of(c.out).size() == 3 * 2 * 3 * 5);

  // --out writes the same bytes.
  ScratchDir dir("fit-enc-out");
  const auto d = run_ropekit("fit --encoding alibi --train-context 16 --eval-contexts 32 --out '" + dir.file("a.csv") + "'");
  CHECK(d.exit_code == 0);
  CHECK(d.out.empty());
  CHECK(ropekit::test::slurp(dir.file("a.csv")) ==
        run_ropekit("fit --encoding alibi --train-context 16 --eval-contexts 32").out);
}

TEST_CASE("fit --encoding: bad input is exit 2 with one line naming the option or key, and no output") {
  ScratchDir cfg("fit-enc-cfg");
  const std::string toy = source_path("configs/paper-table3-toy.yaml");
  const std::string run = " --target phase --train-context 64 --eval-contexts 128";
  check_rejected("fit --encoding rope:dim=63" + run,
                 "ropekit fit: --encoding: encoding 'rope:dim=63': dim = 63 (must be a positive even integer)");
  check_rejected("fit --encoding wavelets" + run, "ropekit fit: --encoding: encoding 'wavelets': encoding family = 'wavelets' (must be one of");
  check_rejected("fit --encoding rope --target phase --train-context 0 --eval-contexts 128",
                 "ropekit fit: --train-context = 0 (must be an integer in [1, 2147483647])");
  check_rejected("fit --encoding rope --target phase --train-context 64 --eval-contexts 128,0",
                 "ropekit fit: --eval-contexts = 0");
  check_rejected("fit --encoding nd:family=axial,dim=8,axes=2" + run,
                 "ropekit fit: --encoding = 'nd:family=axial,dim=8,axes=2' (must be an encoding of 1-D lags: the fit "
                 "is over causal lags d = 0..T-1, and nd takes 2-D lags)");
  check_rejected("fit --encoding 'rf-rope:spectrum=gaussian(sigma=1,dims=2),blocks=8,seed=1'" + run,
                 "(must be an encoding of 1-D lags");
  check_rejected("fit --encoding sinusoidal:dim=8" + run, "ropekit fit: --encoding = 'sinusoidal:dim=8' (must be a relative encoding");
  check_rejected("fit --encoding rope --target spiral --train-context 64 --eval-contexts 128", "target = 'spiral' (must be one of phase, linear, ");
  check_rejected("fit --encoding rope --target phase --train-context 64 --eval-contexts 128 --ridge -1",
                 "ropekit fit: --ridge = -1");
  check_rejected("fit --encoding rope --target phase --train-context 64 --eval-contexts 128 --head-dim 63",
                 "ropekit fit: --head-dim = 63");
  check_rejected("fit --encoding rope --target phase --train-context 64 --eval-contexts 128 --tau sideways",
                 "ropekit fit: --tau = 'sideways' (must be bounded or raw)");
  check_rejected("fit --encoding rope --target phase --eval-contexts 128", "--train-context = none (must be set without --config");
  check_rejected("fit --encoding rope --target phase --train-context 64", "--eval-contexts = none (must be set without --config");
  check_rejected("fit --target phase --train-context 64 --eval-contexts 128", "--encoding = none (must be given, or --methods or --config");
  // With --config: the config sets the run's parameters; --encoding replaces its encodings.
  check_rejected("fit --config '" + toy + "' --encoding rope --train-context 64",
                 "ropekit fit: --train-context = '64' (must be absent with --config");
  check_rejected("fit --config '" + toy + "' --encoding rope:dim=63", "--encoding: encoding 'rope:dim=63': dim = 63");
  // A YAML config with a bad spelling names the key.
  std::string text = ropekit::test::slurp(toy);
  text.replace(text.find("ablation_methods:"), 0, "encodings: [rope, 'rope:dim=63']\n");
  const std::string bad = cfg.write("c.yaml", text);
  check_rejected("fit --config '" + bad + "'", "config " + bad + ": encodings[1]: encoding 'rope:dim=63': dim = 63");
}
