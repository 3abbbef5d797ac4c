// kernel --columns: the columns asked, in their order, as Python's ropekit.kernel(columns=...) returns them (the
// same names, order rules and messages: commands/kernel_request.hpp checked_kernel_columns), each cell as the
// full table prints it.
#include <doctest/doctest.h>

#include <filesystem>

#include "support.hpp"

using namespace ropekit::test;

namespace {

// The cells of a CSV, rows of cells (a quoted cell, a spelling, without its quotes; no newline inside one).
std::vector<std::vector<std::string>> cells(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t at = 0, end; (end = csv.find('\n', at)) != std::string::npos; at = end + 1) {
    rows.emplace_back(1);
    bool quoted = false;
    for (const char c : csv.substr(at, end - at)) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) rows.back().emplace_back();
      else rows.back().back() += c;
    }
  }
  return rows;
}

}  // namespace

TEST_CASE("kernel --columns: the columns asked, in their order, each cell as the full table's") {
  const auto all = run_ropekit("kernel --encoding rope:dim=8 --lags 0,1,2,1000");
  const auto some = run_ropekit("kernel --encoding rope:dim=8 --lags 0,1,2,1000 --columns continuum,lag,kernel,lag");
  CAPTURE(some.err);
  REQUIRE(all.exit_code == 0);
  REQUIRE(some.exit_code == 0);
  const auto a = cells(all.out), s = cells(some.out);
  REQUIRE(a.size() == 5);
  REQUIRE(s.size() == 5);
  CHECK(s[0] == std::vector<std::string>{"continuum", "lag", "kernel"});  // a column asked twice: once
  auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(a[0].begin(), a[0].end(), name) - a[0].begin());
  };
  for (std::size_t r = 1; r < 5; ++r)
    CHECK(s[r] == std::vector<std::string>{a[r][col("continuum")], a[r][col("lag")], a[r][col("kernel")]});
  // A model's rows start with layer_type whatever is asked; masked lags stay empty.
  const std::string gemma = source_path("data/models/gemma-3-4b.json");
  const auto m = run_ropekit("kernel --model '" + gemma + ":sliding_attention' --lags 10,1024 --columns kernel");
  REQUIRE(m.exit_code == 0);
  const auto mc = cells(m.out);
  REQUIRE(mc.size() == 3);
  CHECK(mc[0] == std::vector<std::string>{"layer_type", "kernel"});
  CHECK(mc[1][0] == "sliding_attention");
  CHECK_FALSE(mc[1][1].empty());
  CHECK(mc[2] == std::vector<std::string>{"sliding_attention", ""});
  // Several encodings: a column none fills is left out (as Python's).
  const auto two = run_ropekit("kernel --encoding rope:dim=8 xpos:dim=8 --lags 1 --columns expected_kernel,kernel");
  REQUIRE(two.exit_code == 0);
  CHECK(cells(two.out)[0] == std::vector<std::string>{"kernel"});
}

TEST_CASE("kernel --columns: npy of the columns asked") {
  ScratchDir dir("kernel-columns");
  const std::string npy = dir.file("k.npy");
  const auto r = run_ropekit("kernel --encoding rope:dim=8 --lags 0:1000 --columns kernel --out '" + npy + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string bytes = slurp(npy);
  REQUIRE(bytes.rfind("\x93NUMPY", 0) == 0);
  const std::string header = bytes.substr(10, 120);
  CHECK(header.find("'kernel'") != std::string::npos);
  CHECK(header.find("'lag'") == std::string::npos);
  CHECK(header.find("(1000,)") != std::string::npos);
}

TEST_CASE("kernel --columns: refusals, worded as Python's") {
  check_rejected("kernel --encoding rope:dim=8 --columns expected_kernel",
                 "ropekit kernel: --columns = 'expected_kernel' (must be columns of this encoding's kernel: encoding, "
                 "lag, kernel, content_variance, sine_residual, continuum, continuum_sine)");
  check_rejected("kernel --encoding rope:dim=8 xpos:dim=8 --columns kernal",
                 "ropekit kernel: --columns = 'kernal' (must be columns of kernel: encoding, lag, kernel, "
                 "content_variance, expected_kernel, frequency_variance, sine_residual, continuum, continuum_sine)");
  check_rejected("kernel --spectrum gaussian:sigma=1 --columns kernel", "--columns = 'kernel' (must be given with "
                                                                        "--encoding only)");
}
