// ropekit verify content as a user meets it: the columns, PASS rows and exit 0, the wrong-rho run's FAIL and
// exit 3 with complete output, k-D lags, thread-count independence, and bad input (one "error: ..." line naming
// the option, exit 2, no output file).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "reports/table.hpp"
#include "ropekit/core/spelling.hpp"
#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;

namespace {
ropekit::CsvData csv(const std::string& text) { return ropekit::parse_csv(text, "stdout"); }
double num(const std::string& s) { return ropekit::parse_double(s).value(); }
const std::vector<std::string> kColumns = {"lag",          "mean_expected", "mean_observed", "z_mean",
                                           "var_expected", "var_observed",  "z_var",         "verdict"};
}  // namespace

TEST_CASE("verify content: the columns, the closed forms and PASS rows, exit 0") {
  const auto r = run_ropekit("verify content --encoding rope:dim=32 --trials 4000 --seed 7");
  REQUIRE(r.exit_code == 0);
  const auto t = csv(r.out);
  CHECK(t.columns == kColumns);
  REQUIRE(t.rows.size() == 4);  // default lags 0, 1, 10, 100
  CHECK(t.rows[3][0] == "100");
  for (const auto& row : t.rows) CHECK(row.back() == "PASS");
  // Lag 0: G = I_32, mean rho n = 16, variance n + rho^2 n = 40 (default rho 0.5).
  CHECK(num(t.rows[0][1]) == doctest::Approx(16).epsilon(1e-15));
  CHECK(num(t.rows[0][4]) == doctest::Approx(40).epsilon(1e-15));
  CHECK(r.err.rfind("verify content: PASS (4 lags, ", 0) == 0);
  CHECK(r.err.find("over 8 checks") != std::string::npos);
  CHECK(r.err.find("rho = 0.5, N = 4000, seed 7") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("verify content --assume-rho 0 with rho 0.5 sampled fails: exit 3, complete table") {
  ScratchDir dir("content-cli");
  const std::string out = dir.file("t.md");
  const auto r = run_ropekit("verify content --encoding rope:dim=32 --trials 4000 --seed 7 --assume-rho 0 --format md "
                             "--out " + out);
  REQUIRE(r.exit_code == 3);
  CHECK(r.out.empty());
  const std::string md = ropekit::test::slurp(out);
  CHECK(md.rfind("| lag | mean_expected | mean_observed | z_mean | var_expected | var_observed | z_var | verdict |\n", 0) == 0);
  CHECK(std::count(md.begin(), md.end(), '\n') == 6);  // header, rule, 4 lags
  CHECK(md.find("| 0 | 0 | ") != std::string::npos);    // lag 0: expected mean 0 at rho = 0
  CHECK(md.find("| FAIL |") != std::string::npos);
  CHECK(r.err.rfind("verify content: FAIL (", 0) == 0);
  CHECK(r.err.find("rho = 0.5 sampled, expected values at --assume-rho 0") != std::string::npos);
}

TEST_CASE("verify content: k-D lags for nd, and the same output with --threads 1 and --threads 2") {
  const auto nd = run_ropekit("verify content --encoding nd:family=axial,dim=8,axes=2,base=100 --lags '0,0;1,0;0.5,2' "
                              "--trials 3000 --seed 3");
  REQUIRE(nd.exit_code == 0);
  const auto t = csv(nd.out);
  REQUIRE(t.rows.size() == 3);
  CHECK(t.rows[2][0] == "0.5,2");
  for (const std::string cmd : {"verify content --encoding jordan:m=2,dim=8,L=64 --trials 1000 --alpha 0.01 --rho -0.3 --seed 11",
                                "verify content --encoding 'rf-rope:spectrum=cauchy(b=2),blocks=8,seed=1' --lags 0.5,3 "
                                "--trials 700 --alpha 0.01"}) {
    CAPTURE(cmd);
    const auto one = run_ropekit(cmd + " --threads 1");
    const auto two = run_ropekit(cmd + " --threads 2");
    REQUIRE(one.exit_code == 0);
    CHECK(one.out == two.out);
    CHECK(one.err == two.err);
  }
}

TEST_CASE("verify content: bad input is one error line naming the option, exit 2, no output file") {
  ScratchDir dir("content-bad");
  struct Bad {
    std::string args, names;
  };
  const std::vector<Bad> bad = {
      {"--encoding warp", "--encoding"},
      {"--encoding rope:dim=7", "dim"},
      {"--encoding rope --rho 1.5", "--rho = 1.5 (must be in [-1, 1])"},
      {"--encoding rope --rho nan", "--rho"},
      {"--encoding rope --assume-rho -2", "--assume-rho = -2"},
      {"--encoding rope --trials 1", "--trials = 1"},
      {"--encoding rope --trials 2.5", "--trials"},
      {"--encoding sinusoidal:dim=16", "--encoding = 'sinusoidal:dim=16' (must be a relative encoding"},
      {"--encoding nd:family=axial,dim=8,axes=2", "--lags = none"},
      {"--encoding nd:family=axial,dim=8,axes=2 --lags 1,2,3", "--lags"},
      {"--encoding rope --lags 1,nan", "--lags"},
      {"--encoding rope --alpha 0", "--alpha"},
      {"--encoding rope --alpha 1e-320", "--alpha"},
      {"--encoding rope --format xml", "--format"},
      {"--encoding rope --seed -1", "--seed"},
      {"--encoding alibi --lags 1e70", "--lags"},
      // Too few trials to calibrate the variance check of a heavy-tailed score at this alpha (score_null.hpp).
      {"--encoding alibi:slope=0.5,L=10 --lags 30 --trials 300", "--trials = 300 (must be at least "},
      // Budgets: hours of work blame --trials (with the largest count that fits), terabytes of operator the size n.
      {"--encoding rope:dim=4096 --trials 1e11", "--trials = 100000000000 (must be at most "},
      {"--encoding rope:dim=1000000 --lags 1", "--encoding = 'rope:dim=1000000' (n = 1000000) (must be at most n = "},
      {"--rho 0.5", "--encoding"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.args);
    const std::string out = dir.file("out.csv");
    const auto r = run_ropekit("verify content " + b.args + " --out " + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(r.err.find(b.names) != std::string::npos);
    CHECK(r.err.find("verify content") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
    CHECK_FALSE(std::filesystem::exists(out));
  }
}
