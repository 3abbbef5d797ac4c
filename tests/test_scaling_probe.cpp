// The `scaling` probe as `make run` runs it: its files, and its numbers against values computed here from the
// definitions (spec encodings.md sections 1 and 3; fixed-basis.md section 4).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "reports/table.hpp"
#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;

using ropekit::test::slurp;

TEST_CASE("probe scaling: kernels, attention factors and fits against independent values") {
  ScratchDir dir("scaling-probe");
  const auto r = run_ropekit("probe scaling --out-dir '" + dir.path().string() + "'");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const char* f : {"scaling.md", "scaling-kernels.csv", "scaling-fit.csv", "scaling-kernels-s8.svg",
                        "scaling-kernels-s32.svg"})
    CHECK(std::filesystem::exists(dir.path() / f));

  // Unscaled RoPE's kernel at lag 1: (1/64) sum_i cos(1e4^{-2i/128}).
  const auto kernels = ropekit::parse_csv(slurp(dir.file("scaling-kernels.csv")), "scaling-kernels.csv");
  const auto col = [&](const std::string& name) {
    for (std::size_t j = 0; j < kernels.columns.size(); ++j)
      if (kernels.columns[j] == name) return j;
    FAIL("no column " << name);
    return std::size_t{0};
  };
  double expected = 0;
  for (int i = 0; i < 64; ++i) expected += std::cos(std::pow(1e4, -2.0 * i / 128));
  expected /= 64;
  bool seen = false;
  for (const auto& row : kernels.rows)
    if (row[col("scheme")] == "RoPE (unscaled)" && std::stod(row[col("lag")]) == 1) {
      CHECK(std::stod(row[col("kernel")]) == doctest::Approx(expected).epsilon(1e-14));
      seen = true;
    }
  CHECK(seen);

  // Attention factors: the spec's public values, printed to 4 significant digits in the report. YaRN's
  // 0.1 ln s + 1 (s = 32: 1.3466); LongRoPE's sqrt(1 + ln s / ln 4096) (s = 8: 1.118034, s = 32: 1.190238).
  const std::string md = slurp(dir.file("scaling.md"));
  CHECK(md.find("| 32 | YaRN | 3.609e-06 | 13.28 | 43 of 64 | 1.347 |") != std::string::npos);
  CHECK(md.find("| 8 | LongRoPE | 1.443e-05 | 13.28 | 43 of 64 | 1.118 |") != std::string::npos);
  CHECK(md.find("| 32 | LongRoPE | 3.609e-06 | 13.28 | 43 of 64 | 1.19 |") != std::string::npos);

  // Fits: the phase target cos(omega d), omega = theta_3, is a column of the unscaled basis (R^2 = 1 at any length,
  // up to the ridge); PI divides omega by s, so no column matches it beyond L0 (R^2 < 0).
  const auto fits = ropekit::parse_csv(slurp(dir.file("scaling-fit.csv")), "scaling-fit.csv");
  auto fcol = [&](const std::string& name) {
    for (std::size_t j = 0; j < fits.columns.size(); ++j)
      if (fits.columns[j] == name) return j;
    FAIL("no column " << name);
    return std::size_t{0};
  };
  int checked = 0;
  for (const auto& row : fits.rows) {
    if (row[fcol("target")] != "phase" || row[fcol("split")] != "eval") continue;
    const std::string m = row[fcol("method")];
    const double r2 = std::stod(row[fcol("r2")]);
    if (m == "rope:dim=128,base=10000") {
      CHECK(r2 > 1 - 1e-9);
      ++checked;
    }
    if (m.find("linear(") != std::string::npos) {
      CHECK(r2 < 0);
      ++checked;
    }
  }
  CHECK(checked == 4);  // two lengths each
}
