// The fixed-basis probe end to end: every printed cell of the paper's Tables 3, 6, 11 and 16
// against an independent float64 implementation (data/paper-fixed-basis-cells.csv, oracle_f64),
// through the same code path as `ropekit fit --config` (load_fit_config + run_fixed_basis).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "config/fit_config_yaml.hpp"
#include "reports/fit_rows.hpp"
#include "probes/paper_cells.hpp"
#include "reports/table.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/fit/metrics.hpp"
#include "tests/support.hpp"

using namespace ropekit;

namespace {

// The config behind each table, plus the extra methods/targets the table needs (the configs' comments).
FitConfig config_for_table(int table) {
  std::string path;
  std::vector<std::string> methods, targets;
  if (table == 3) path = "configs/paper-table3-toy.yaml", methods = {"jordan_exact_c010", "jordan_exact_scaled"};
  else if (table == 11) path = "configs/paper-table11-structured.yaml";
  else path = "configs/paper-tables6-16-highjet.yaml", methods = {"jordan_scaled_m2_c010"}, targets = {"scaled_high_jet_r1"};
  FitConfig c = load_fit_config(test::source_path(path));
  c.methods.insert(c.methods.end(), methods.begin(), methods.end());
  c.targets.insert(c.targets.end(), targets.begin(), targets.end());
  return c;
}

}  // namespace

TEST_CASE("every printed paper cell matches the independent float64 answer to 1e-5") {
  std::map<int, std::vector<FitRow>> rows;  // tables 6 and 16 share one run
  int checked = 0;
  std::set<int> tables;
  for (const auto& cell : paper_cells()) {
    const int run = cell.table == 16 ? 6 : cell.table;
    if (!rows.count(run)) rows[run] = run_fixed_basis(config_for_table(run));
    const double v = metric_value(rows[run], cell.method, cell.target, cell.metric);
    CAPTURE(cell.table);
    CAPTURE(cell.row);
    CAPTURE(cell.column);
    CAPTURE(v);
    CAPTURE(cell.oracle_f64);
    // The acceptance bound: 1e-5 relative, absolute floor 1e-9 for cells near zero. The
    // oracle itself is stable to better than 1e-6 across four solvers.
    CHECK(std::fabs(v - cell.oracle_f64) <= std::max(1e-5 * std::fabs(cell.oracle_f64), 1e-9));
    ++checked;
    tables.insert(cell.table);
  }
  CHECK(checked == 96);
  CHECK(tables == std::set<int>{3, 6, 11, 16});
}

TEST_CASE("rows come in the reference's order: seed - target - method - train then contexts") {
  FitConfig c = config_for_table(3);
  c.methods = {"rope", "alibi"};
  const auto rows = run_fixed_basis(c);
  REQUIRE(rows.size() == c.seeds.size() * 3 * 2 * (1 + c.eval_contexts.size()));
  std::size_t i = 0;
  for (auto seed : c.seeds)
    for (const auto& t : c.targets)
      for (const auto& m : c.methods) {
        CHECK(rows[i].seed == seed);
        CHECK(rows[i].target == t);
        CHECK(rows[i].method == m);
        CHECK(rows[i].split == "train");
        CHECK(rows[i].context == 1024);
        ++i;
        for (int T : c.eval_contexts) {
          CHECK(rows[i].split == "eval");
          CHECK(rows[i].context == T);
          CHECK(rows[i].method == m);
          ++i;
        }
      }
}

TEST_CASE("the numbers do not depend on the thread count") {
  const FitConfig c = config_for_table(11);
  const auto one = run_fixed_basis(c, 1), two = run_fixed_basis(c, 2);
  REQUIRE(one.size() == two.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    CHECK(one[i].mse == two[i].mse);
    CHECK(one[i].r2 == two[i].r2);
    CHECK(one[i].cond == two[i].cond);
  }
}

TEST_CASE("train_points < L draws a seeded sorted subset - seeds then differ - and repeat exactly") {
  const auto a = training_lags(1024, 100, 0), b = training_lags(1024, 100, 0), c = training_lags(1024, 100, 1);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a.size() == 100);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(std::set<int>(a.begin(), a.end()).size() == 100);
  CHECK(a.front() >= 0);
  CHECK(a.back() <= 1023);
  CHECK(training_lags(1024, 1024, 5).size() == 1024);

  FitConfig cfg = config_for_table(3);
  cfg.methods = {"rope"};
  cfg.train_points = 200;
  const auto rows = run_fixed_basis(cfg);
  // Rows of seed 0 and seed 1 for the same target/method/context differ (different training lags).
  const std::size_t per_seed = rows.size() / cfg.seeds.size();
  CHECK(rows[0].n_train == 200);
  CHECK(rows[1].mse != rows[per_seed + 1].mse);
}

TEST_CASE("rows read back from CSV - including the reference's task/benchmark column names") {
  FitConfig c = config_for_table(3);
  c.methods = {"rope", "jordan_rope"};
  const auto rows = run_fixed_basis(c);
  const auto back = read_fit_rows(parse_csv(to_csv(fit_rows_table(rows)), "rows"), "rows");
  REQUIRE(back.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(back[i].target == rows[i].target);
    CHECK(back[i].mse == rows[i].mse);  // shortest round-trip formatting is exact
    CHECK(back[i].cond == rows[i].cond);
  }
  const auto toy = read_fit_rows(parse_csv("seed,task,method,context,split,mse\n0,mixed,rope,8192,eval,8.79\n", "ref"), "ref");
  CHECK(toy.at(0).target == "mixed");
  const auto bench = read_fit_rows(
      parse_csv("seed,benchmark,method,context,split,mse,r2\n0,damped_wave,rope,8192,eval,1.3,0.36\n", "ref"), "ref");
  CHECK(bench.at(0).target == "damped_wave");
  CHECK(bench.at(0).r2 == 0.36);
  CHECK_THROWS_AS(read_fit_rows(parse_csv("seed,method\n0,rope\n", "bad"), "bad"), InputError);
}

TEST_CASE("predict() (the plots' data) scores exactly as the rows of the same run") {
  FitConfig c = config_for_table(3);
  c.methods = {"rope", "jordan_raw_tau"};
  const auto rows = run_fixed_basis(c);
  const Predictions p = predict(c, c.methods, 8192);
  REQUIRE(p.pred.size() == 2);
  CHECK(p.lags.size() == 8192);
  for (std::size_t k = 0; k < c.methods.size(); ++k)
    for (std::size_t j = 0; j < c.targets.size(); ++j) {
      CAPTURE(c.methods[k]);
      CAPTURE(c.targets[j]);
      const auto col = static_cast<Eigen::Index>(j);
      const double mse = (p.pred[k].col(col) - p.y.col(col)).squaredNorm() / 8192;
      // Same fit and features, summed in another order: a few ulps.
      CHECK(mse == doctest::Approx(metric_value(rows, c.methods[k], c.targets[j], "mse@8192")).epsilon(1e-12));
    }
  CHECK_THROWS_AS(predict(c, {"rope"}, 0), InputError);
}

TEST_CASE("encodings fit like the methods they name: rope, jordan_m3, direct-sum:[rope,alibi] give identical rows") {
  // Issue 7: `rope` in encodings is the method `rope` of the same run (parse_encoding with the run's defaults),
  // and features(encoding) gives the same columns as the fixed-basis evaluator. L = 1024 is a multiple of the
  // SIMD width, so the windows of the encoding path compute every sin/cos as the method path's table does
  // (fit_run.cpp, encoding_rows): the rows agree exactly, not just to rounding.
  FitConfig c = config_for_table(3);
  c.methods = {"rope", "jordan_m3", "rope_alibi"};
  c.encodings = {"rope", "jordan_m3", "direct-sum:[rope,alibi]"};
  const auto rows = run_fixed_basis(c);
  REQUIRE(rows.size() == c.seeds.size() * c.targets.size() * 6 * (1 + c.eval_contexts.size()));
  const std::map<std::string, std::string> same = {
      {"rope", "rope"}, {"jordan_m3", "jordan_m3"}, {"rope_alibi", "direct-sum:[rope,alibi]"}};
  const std::size_t block = 1 + c.eval_contexts.size();  // rows of one (seed, target, basis)
  int compared = 0;
  for (std::size_t i = 0; i < rows.size(); i += 6 * block)  // one (seed, target): 3 methods, then 3 encodings
    for (std::size_t m = 0; m < 3; ++m)
      for (std::size_t k = 0; k < block; ++k) {
        const FitRow& a = rows[i + m * block + k];
        const FitRow& b = rows[i + (3 + m) * block + k];
        CAPTURE(a.method);
        CAPTURE(a.target);
        CAPTURE(a.context);
        REQUIRE(same.at(a.method) == b.method);
        CHECK(a.seed == b.seed);
        CHECK(a.target == b.target);
        CHECK(a.context == b.context);
        CHECK(a.split == b.split);
        CHECK(a.n_features == b.n_features);
        CHECK(a.rank == b.rank);
        CHECK(a.mse - b.mse == 0);
        CHECK(a.r2 - b.r2 == 0);
        CHECK(a.cond - b.cond == 0);
        ++compared;
      }
  CHECK(compared == 3 * 3 * 3 * 5);  // seeds x targets x pairs x (train + 4 contexts)
}

TEST_CASE("an encoding-only run: rows in order, features counted by n_features(encoding)") {
  FitConfig c = config_for_table(3);
  c.methods.clear();
  c.encodings = {"alibi", "rope:dim=64,base=1e4,F=4", "xpos:dim=8"};
  c.seeds = {0};
  const auto rows = run_fixed_basis(c);
  REQUIRE(rows.size() == 3 * 3 * (1 + c.eval_contexts.size()));
  CHECK(rows[0].method == "alibi");
  CHECK(rows[0].n_features == 2);
  CHECK(rows[5].method == "rope:dim=64,base=1e4,F=4");
  CHECK(rows[5].n_features == 9);
  CHECK(rows[10].method == "xpos:dim=8");
  CHECK(rows[10].n_features == 9);
  for (const auto& r : rows) {
    CHECK(std::isfinite(r.mse));
    CHECK(std::isfinite(r.cond));
  }
}

TEST_CASE("streamed evaluation (issue 9): the rows of an odd-length, unsorted set of contexts equal in-memory sums") {
  // The run streams lags in windows (fit_run.cpp) with compensated sums; here the same fit is scored from predict()'s
  // whole-grid predictions with plain two-pass sums (fit_quality). Lengths that are not multiples of the window
  // (1024) and repeated, unsorted contexts exercise the window edges and the context map. Tolerances: the two
  // routes' predictions may differ by a few ulps (different product blockings), so each squared residual r^2 moves by
  // up to 2 |r| * 4 eps |y|max, plus 1e-12 relative for the summation orders; R^2 = 1 - MSE / max(Var, 1e-12)
  // inherits the MSE bound divided by the (possibly floored) variance: at T = 1 the floor turns an ulp into ~1e-10.
  FitConfig c = config_for_table(3);
  c.methods = {"rope", "jordan_rope"};
  c.basis.train_context = 300;
  c.train_points = 300;
  c.eval_contexts = {5000, 1, 300, 2049, 5000, 1025};
  const auto rows = run_fixed_basis(c);
  const Predictions p = predict(c, c.methods, 5000);
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  for (std::size_t k = 0; k < c.methods.size(); ++k)
    for (std::size_t j = 0; j < c.targets.size(); ++j)
      for (int T : c.eval_contexts) {
        CAPTURE(c.methods[k]);
        CAPTURE(c.targets[j]);
        CAPTURE(T);
        const auto col = static_cast<Eigen::Index>(j);
        const Eigen::VectorXd y = p.y.col(col).head(T);
        const auto q = fit_quality(p.pred[k].col(col).head(T), y);
        const std::string key = fmt::format("@{}", T);
        const double mse_tol = 1e-12 * q.mse + 2 * std::sqrt(q.mse) * 4 * kEps * std::max(1.0, y.cwiseAbs().maxCoeff());
        const double var = std::max((y.array() - y.mean()).square().mean(), 1e-12);
        CHECK(std::abs(metric_value(rows, c.methods[k], c.targets[j], "mse" + key) - q.mse) <= mse_tol);
        CHECK(std::abs(metric_value(rows, c.methods[k], c.targets[j], "r2" + key) - q.r2) <=
              mse_tol / var + 1e-12 * std::abs(q.r2));
      }
}

TEST_CASE("evaluation beyond 2^20 lags is streamed, no longer refused (issue 9)") {
  // phase = cos(omega_3 d) is a column of RoPE's basis: the fit is exact at any length, so MSE at 3 * 2^20 lags stays
  // at the ridge's bias level (~1e-14, as at 8192), and R^2 = 1 - MSE/Var with Var(cos) = 1/2 to 1e-6.
  FitConfig c = config_for_table(3);
  c.methods = {"rope"};
  c.targets = {"phase"};
  c.eval_contexts = {3 << 20};
  const auto rows = run_fixed_basis(c);
  const double mse = metric_value(rows, "rope", "phase", fmt::format("mse@{}", 3 << 20));
  CHECK(mse < 1e-12);
  CHECK(metric_value(rows, "rope", "phase", fmt::format("r2@{}", 3 << 20)) == doctest::Approx(1).epsilon(1e-11));
}
