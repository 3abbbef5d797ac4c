// The `scaling` probe as `make run` runs it: its files, and its numbers against values computed here from the
// definitions (spec encodings.md sections 1 and 3; fixed-basis.md section 4).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

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

  // Section 1's rows against values derived here. Cells are printed to 4 significant digits: 5e-4 relative is
  // half a unit in the last printed digit.
  const std::string md = slurp(dir.file("scaling.md"));
  auto cells = [&](const std::string& s, const std::string& scheme) {
    const std::string head = "| " + s + " | " + scheme + " |";
    const auto at = md.find(head);
    REQUIRE_MESSAGE(at != std::string::npos, head);
    std::vector<std::string> out;
    std::stringstream row(md.substr(at + 1, md.find('\n', at) - at - 1));
    for (std::string cell; std::getline(row, cell, '|');) out.push_back(cell.substr(1, cell.size() - 2));
    return out;  // s, scheme, lowest theta, its wavelength / T, frequencies changed, attention factor
  };
  const double pi = std::acos(-1.0), theta_min = std::pow(1e4, -126.0 / 128);  // theta_63 of the unscaled grid
  for (const int s : {8, 32}) {
    CAPTURE(s);
    const double T = 4096.0 * s;
    // The low frequencies of every scaled scheme are divided by s (PI, YaRN, Llama 3.1 by definition; NTK's base
    // B s^{128/126} gives theta_63 = B^{-126/128} / s).
    for (const char* scheme : {"PI (linear)", "NTK", "YaRN", "Llama 3.1"}) {
      CAPTURE(scheme);
      const auto c = cells(std::to_string(s), scheme);
      CHECK(std::stod(c[2]) == doctest::Approx(theta_min / s).epsilon(5e-4));
      CHECK(std::stod(c[3]) == doctest::Approx(2 * pi / (theta_min / s) / T).epsilon(5e-4));
    }
    // Attention factors (spec section 3): YaRN 0.1 ln s + 1, LongRoPE sqrt(1 + ln s / ln 4096).
    CHECK(std::stod(cells(std::to_string(s), "YaRN")[5]) == doctest::Approx(0.1 * std::log(s) + 1).epsilon(5e-4));
    CHECK(std::stod(cells(std::to_string(s), "LongRoPE")[5]) ==
          doctest::Approx(std::sqrt(1 + std::log(s) / std::log(4096.0))).epsilon(5e-4));
    // Llama 3.1 keeps the frequencies whose wavelength 2 pi / theta_i is below L0 / high = 1024 and changes the rest.
    int kept = 0;
    for (int i = 0; i < 64; ++i) kept += 2 * pi / std::pow(1e4, -2.0 * i / 128) < 1024;
    CHECK(cells(std::to_string(s), "Llama 3.1")[4] == std::to_string(64 - kept) + " of 64");
  }

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
