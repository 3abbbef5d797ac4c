// The `models` probe as `make run` runs it: its files, and its summary rows against values computed here from the
// definitions: RoPE's kernel as a mean of cosines (theta by exp/log), wavelengths 2 pi / theta, Men et al.'s
// criterion scanned by brute force, DeepSeek's softmax multiplier (0.1 mscale_all_dim ln s + 1)^2.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <numbers>
#include <optional>
#include <string>

#include "reports/table.hpp"
#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;
using ropekit::test::slurp;

namespace {

// RoPE (n dims, base B) at lag m up to the factor 2/n: sum_i cos(m B^{-2i/n}).
double cos_sum(double base, int n, double m) {
  double s = 0;
  for (int i = 0; i < n / 2; ++i) s += std::cos(m * std::exp(-(2.0 * i / n) * std::log(base)));
  return s;
}

}  // namespace

TEST_CASE("probe models: files, and the summary against independent values") {
  ScratchDir dir("models-probe");
  const auto r = run_ropekit("probe models --out-dir '" + dir.path().string() + "'");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const char* f : {"models.md", "models-summary.csv", "models-kernels.csv", "models-llama.svg", "models-gemma.svg"})
    CHECK(std::filesystem::exists(dir.path() / f));

  const auto csv = ropekit::parse_csv(slurp(dir.file("models-summary.csv")), "models-summary.csv");
  std::map<std::string, std::map<std::string, std::string>> rows;  // "model/layer_type" -> column -> cell
  for (const auto& row : csv.rows) {
    std::map<std::string, std::string> cells;
    for (std::size_t j = 0; j < csv.columns.size(); ++j) cells[csv.columns[j]] = row[j];
    rows[row[0] + "/" + row[1]] = cells;
  }
  REQUIRE(rows.size() == 19);
  auto num = [&](const std::string& key, const std::string& column) {
    REQUIRE_MESSAGE(rows.count(key), key);
    return std::stod(rows[key][column]);
  };

  // Llama 2 7B (n 128, base 1e4, context 4096): every lag 1..4095 scanned here.
  double min = 1;
  std::optional<int> first_negative;
  for (int m = 1; m <= 4095; ++m) {
    const double phi = cos_sum(1e4, 128, m) / 64;
    min = std::min(min, phi);
    if (phi < 0 && !first_negative) first_negative = m;
  }
  REQUIRE(first_negative);
  CHECK(num("Llama 2 7B/full_attention", "visible_lags") == 4095);
  CHECK(num("Llama 2 7B/full_attention", "min_kernel") == doctest::Approx(min).epsilon(1e-12));  // 64 cosines
  CHECK(num("Llama 2 7B/full_attention", "first_negative_lag") == *first_negative);
  int turns = 0;
  for (int i = 0; i < 64; ++i) turns += 2 * std::numbers::pi / std::pow(1e4, -2.0 * i / 128) <= 4096;
  CHECK(num("Llama 2 7B/full_attention", "turns_within_orig") == turns);
  // Men et al.: the smallest base 10^(1 + j/16) with sum_i cos(m theta_i) >= 0 for m = 1..4095 (brute force).
  std::optional<double> bound;
  for (int j = 0; j <= 11 * 16 && !bound; ++j) {
    const double b = 10 * std::pow(10.0, j / 16.0);
    bool ok = true;
    for (int m = 1; m <= 4095 && ok; ++m) ok = cos_sum(b, 128, m) >= -1e-9;
    if (ok) bound = b;
  }
  REQUIRE(bound);
  CHECK(num("Llama 2 7B/full_attention", "men_base_bound") == doctest::Approx(*bound).epsilon(1e-12));
  CHECK(rows["Llama 2 7B/full_attention"]["base_at_or_above_bound"] == (1e4 >= *bound ? "true" : "false"));
  // Mistral 7B v0.1: the same encoding, every layer sliding with window 4096: the same lags 1..4095.
  CHECK(num("Mistral 7B v0.1/sliding_attention", "visible_lags") == 4095);
  CHECK(num("Mistral 7B v0.1/sliding_attention", "men_base_bound") == doctest::Approx(*bound).epsilon(1e-12));

  // Gemma 4's full attention: 64 live pairs, every wavelength <= 188.25 tokens; 192 identity pairs keep the
  // kernel above (192 - 64) / 256 = 0.5 at every lag.
  CHECK(num("Gemma 4/full_attention", "pairs") == 64);
  CHECK(num("Gemma 4/full_attention", "turns_within_orig") == 64);
  CHECK(num("Gemma 4/full_attention", "min_kernel") > 0.5);
  // gpt-oss sliding layers see lags < 128; its full layers the context 131072.
  CHECK(num("gpt-oss 20B/sliding_attention", "visible_lags") == 127);
  CHECK(num("gpt-oss 20B/full_attention", "visible_lags") == 131071);
  CHECK(num("gpt-oss 20B/full_attention", "attention_factor") == doctest::Approx(0.1 * std::log(32.0) + 1).epsilon(1e-15));
  // DeepSeek-V3: 64 of 192 dims rotate; the softmax gets mscale(40, 1)^2 = (0.1 ln 40 + 1)^2.
  CHECK(num("DeepSeek-V3/full_attention", "rotary_dims") == 64);
  CHECK(num("DeepSeek-V3/full_attention", "softmax_scale") ==
        doctest::Approx(std::pow(0.1 * std::log(40.0) + 1, 2)).epsilon(1e-15));
  // Qwen2.5's documented YaRN x4 stretches the 32768 of max_position_embeddings to 131072.
  CHECK(num("Qwen2.5 7B + YaRN x4/full_attention", "context") == 131072);
  // Llama 4 Scout: 36 chunked rope layers, 12 NoPE layers.
  CHECK(num("Llama 4 Scout/chunked_attention", "layers") == 36);
  CHECK(num("Llama 4 Scout/chunked_attention", "visible_lags") == 8191);
  CHECK(num("Llama 4 Scout/full_attention", "layers") == 12);
}
