// The `precision` probe as `make run` runs it: its files, a phase error of its data against the definition computed
// here in float arithmetic (transformers' fp32 path: theta = 1 / powf(1e4, 2i/128), angle = fl32(p theta)), and its
// table of the spec's public numbers.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "reports/table.hpp"
#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;
using ropekit::test::slurp;

TEST_CASE("probe precision: files, the fp32 phase error at p = 4096 from the definition, the public numbers") {
  ScratchDir dir("precision-probe");
  const auto r = run_ropekit("probe precision --out-dir '" + dir.path().string() + "'");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const char* f : {"precision.md", "precision.csv", "precision-phase.svg", "precision-score.svg"})
    CHECK(std::filesystem::exists(dir.path() / f));
  // p = 4096 = 2^12: the fp32 product p theta is exact, so the error is p (theta_fp32 - theta_exact).
  double want = 0;
  for (int i = 0; i < 64; ++i) {
    const float theta = 1.0f / std::pow(1e4f, static_cast<float>(2 * i) / 128.0f);
    const long double exact = 4096.0L * std::exp(-(2.0L * i / 128) * std::log(10000.0L));
    want = std::max(want, static_cast<double>(std::abs(static_cast<long double>(4096.0f * theta) - exact)));
  }
  const auto csv = ropekit::parse_csv(slurp(dir.file("precision.csv")), "precision.csv");
  bool seen = false;
  for (const auto& row : csv.rows)
    if (row[0] == "Llama 2 7B, transformers, fp32" && row[1] == "4096") {
      // glibc's powf here and PyTorch's CPU pow (SLEEF) that the library follows agree on these 64 entries
      // (tests/data/transformers/pow.csv, base 1e4, n 128); long double exp/log: 1e-15.
      CHECK(std::stod(row[2]) == doctest::Approx(want).epsilon(1e-9));
      seen = true;
    }
  CHECK(seen);
  const std::string md = slurp(dir.file("precision.md"));
  CHECK(md.find("| 0.626 / 2.505 / 5.01 rad | 0.626 / 2.505 / 5.01 rad |") != std::string::npos);
  CHECK(md.find("| 1044.27 / 1045 | 1044.27 / 1045 |") != std::string::npos);
  CHECK(md.find("| rounds to 2048 | 2048 |") != std::string::npos);
}
