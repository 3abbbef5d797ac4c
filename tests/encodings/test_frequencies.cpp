// Frequency schedules and scaling schemes (spec encodings.md sections 2-3): the public values of section 3 to
// their printed digits, every scheme's theta_i against a re-derivation written here in another way, the float32
// emulation, sampled frequencies, spellings and every refusal.

#include <algorithm>
#include <sstream>
#include <fstream>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <string>
#include <variant>
#include <vector>

#include <boost/math/distributions/normal.hpp>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/core/rng.hpp"
#include "support.hpp"

// The float expressions below must round like the library's (which turns contraction off): no FMA fusion.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

using namespace ropekit;
using ropekit::test::test_seed;
using ropekit::test::z_bound;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// |x - printed| <= half a unit in the last printed decimal.
void check_digits(double x, double printed, int decimals) {
  CAPTURE(x);
  CAPTURE(printed);
  CHECK(std::abs(x - printed) <= 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9));
}

void check_rel(double got, double want, double rel) {
  CAPTURE(got);
  CAPTURE(want);
  CHECK(std::abs(got - want) <= rel * std::abs(want));
}

FrequencyTable geo(int dim, double base, Scaling s = scaling::None{}, std::optional<double> T = {},
                   Convention c = Convention::huggingface, bool f32 = false, double partial = 1,
                   std::optional<int> count = {}) {
  return frequencies({Geometric{dim, base, count, partial}, std::move(s)}, T, c, f32);
}

// theta_i = exp(-(2i/r) ln B): a route other than pow.
double theta_exp(double base, int r, int i) { return std::exp(-(2.0 * i / r) * std::log(base)); }

// Relative tolerance of theta_exp against pow: exp turns the argument's rounding (|arg| eps/2 absolute) into
// |arg| eps/2 relative, plus a few ulps for pow, log and the scheme's own roundings.
double exp_tol(double base, int r, int i, double extra_ulps = 4) {
  return ((2.0 * i / r) * std::log(base) + extra_ulps) * kEps;
}

// YaRN correction dim, written out: where the number of rotations over L0 equals b.
double correction_dim(int r, double base, double L0, double b) {
  return r * std::log(L0 / (2 * std::numbers::pi * b)) / (2 * std::log(base));
}


// Splits "yarn(factor=32,short=[1,2])" into name and keys (brackets kept whole), for spelling round trips.
std::pair<std::string, std::map<std::string, std::string>> split_spelling(const std::string& text) {
  const auto open = text.find('(');
  if (open == std::string::npos) return {text, {}};
  std::map<std::string, std::string> keys;
  const std::string inner = text.substr(open + 1, text.size() - open - 2);
  int depth = 0;
  std::string item;
  auto flush = [&] {
    const auto eq = item.find('=');
    keys[item.substr(0, eq)] = item.substr(eq + 1);
    item.clear();
  };
  for (char ch : inner) {
    if (ch == '[') ++depth;
    if (ch == ']') --depth;
    if (ch == ',' && depth == 0) {
      flush();
      continue;
    }
    item += ch;
  }
  if (!item.empty()) flush();
  return {text.substr(0, open), keys};
}

float ulp(float x) { return std::nextafter(x, std::numeric_limits<float>::infinity()) - x; }

}  // namespace

TEST_CASE("public values: YaRN correction ranges, raw and truncated") {
  struct Row {
    int n;
    double B, L0, raw_low, raw_high, low, high;
  };
  for (const Row& row : {Row{128, 1e4, 4096, 20.9445, 45.0269, 20, 46}, Row{64, 1e4, 4096, 10.4722, 22.5134, 10, 23},
                         Row{128, 1e6, 32768, 23.5959, 39.6509, 23, 40}}) {
    CAPTURE(row.n);
    CAPTURE(row.B);
    scaling::Yarn y{.factor = 16, .orig = row.L0};
    y.truncate = false;
    const auto raw = yarn_correction_range(y, row.n, row.B);
    check_digits(raw.low, row.raw_low, 4);
    check_digits(raw.high, row.raw_high, 4);
    y.truncate = true;
    const auto cut = yarn_correction_range(y, row.n, row.B);
    CHECK(cut.low == row.low);
    CHECK(cut.high == row.high);
  }
}

TEST_CASE("public values: YaRN mscale and the logit factor") {
  check_digits(yarn_mscale(4), 1.138629, 6);
  check_digits(yarn_mscale(40), 1.368888, 6);
  check_digits(yarn_mscale(64), 1.415888, 6);
  const auto t = geo(128, 1e4, scaling::Yarn{.factor = 64, .orig = 4096});
  check_digits(t.attention_factor, 1.415888, 6);
  check_digits(t.attention_factor * t.attention_factor, 2.004740, 6);  // G gets a^2
  CHECK(yarn_mscale(1) == 1);
  CHECK(yarn_mscale(0.5) == 1);
}

TEST_CASE("public values: LongRoPE attention factors and NTK bases") {
  scaling::LongRope l{.short_factor = {1}, .long_factor = {1}, .orig = 4096};
  l.max = 8 * 4096.0;
  check_digits(longrope_attention_factor(l), 1.118034, 6);
  l.max = 32 * 4096.0;
  check_digits(longrope_attention_factor(l), 1.190238, 6);
  check_digits(ntk_base(1e4, 128, 2), 20221.2617, 4);
  check_digits(ntk_base(1e4, 128, 8), 82684.6226, 4);
}

TEST_CASE("public values: Llama 3.1 keeps 29, blends 6, divides 29 by 8 (wavelengths compared directly)") {
  const auto t = geo(128, 5e5, scaling::Llama3{.orig = 8192});
  REQUIRE(t.theta.rows() == 64);
  int kept = 0, blended = 0, divided = 0;
  for (int i = 0; i < 64; ++i) {
    const double theta = t.unscaled(i), wavelength = 2 * std::numbers::pi / theta;
    CAPTURE(i);
    if (wavelength < 8192.0 / 4) {
      ++kept;
      CHECK(t.theta(i) == theta);
    } else if (wavelength > 8192.0 / 1) {
      ++divided;
      CHECK(t.theta(i) == theta / 8);  // the same single division
    } else {
      ++blended;
      const double g = (8192 / wavelength - 1) / (4 - 1);
      CHECK(g >= 0);
      CHECK(g <= 1);
      check_rel(t.theta(i), (1 - g) * theta / 8 + g * theta, 8 * kEps);  // ~6 roundings in each route
    }
  }
  CHECK(kept == 29);
  CHECK(blended == 6);
  CHECK(divided == 29);
  CHECK(t.attention_factor == 1);
}

TEST_CASE("geometric theta_i = base^(-2i/r), with partial rotary and count") {
  for (const auto& [dim, base, partial, count] :
       {std::tuple{128, 1e4, 1.0, -1}, std::tuple{64, 5e5, 1.0, -1}, std::tuple{128, 1e4, 0.25, -1},
        std::tuple{80, 1e4, 0.4, -1}, std::tuple{16, 1e4, 1.0, 24}, std::tuple{2, 10.0, 1.0, -1}}) {
    const int dim_ = dim;  // copies: doctest's CAPTURE is a lambda, which cannot capture a structured binding (clang 14)
    const double partial_ = partial;
    CAPTURE(dim_);
    CAPTURE(partial_);
    const int r = static_cast<int>(std::lround(dim * partial));
    const auto t = geo(dim, base, scaling::None{}, {}, Convention::huggingface, false, partial,
                       count > 0 ? std::optional<int>(count) : std::nullopt);
    REQUIRE(t.theta.rows() == (count > 0 ? count : r / 2));
    CHECK(t.theta.cols() == 1);
    CHECK(t.theta(0) == 1);
    for (int i = 0; i < t.theta.rows(); ++i) check_rel(t.theta(i), theta_exp(base, r, i), exp_tol(base, r, i));
    CHECK(t.theta == t.unscaled);
    CHECK(t.attention_factor == 1);
  }
}

TEST_CASE("public values: Gemma 4's proportional RoPE (n 512, p 0.25, B 1e6) against GPT-NeoX partial") {
  // models.md section 4: 64 live pairs, lowest theta 0.0333762, longest wavelength 188.25 tokens; GPT-NeoX partial
  // rotation (the exponent over the 128 rotated dims) would give 5,063,256.
  const auto t = geo(512, 1e6, scaling::Proportional{}, {}, Convention::huggingface, false, 0.25);
  REQUIRE(t.theta.rows() == 64);
  CHECK(t.identity_dims == 512 - 128);  // 192 zero-frequency pairs: identity planes
  check_digits(t.theta(63), 0.0333762, 7);
  check_digits(2 * std::numbers::pi / t.theta(63), 188.25, 2);
  for (int i = 0; i < 64; ++i) check_rel(t.theta(i), theta_exp(1e6, 512, i), exp_tol(1e6, 512, i));
  const auto neox = geo(512, 1e6, scaling::None{}, {}, Convention::huggingface, false, 0.25);
  REQUIRE(neox.theta.rows() == 64);
  CHECK(neox.identity_dims == 384);
  CHECK(std::round(2 * std::numbers::pi / neox.theta(63)) == 5063256);
  // factor divides every live frequency (transformers' inv_freq /= factor); 8 is a power of two: exact.
  const auto f8 = geo(256, 1e6, scaling::Proportional{8}, {}, Convention::huggingface, false, 0.25);
  REQUIRE(f8.theta.rows() == 32);
  for (int i = 0; i < 32; ++i) CHECK(f8.theta(i) == f8.unscaled(i) / 8);
  CHECK(f8.attention_factor == 1);
}

TEST_CASE("proportional: live pairs floor(p n / 2) where transformers floors, refusals") {
  // n = 10, p = 0.5: p n / 2 = 2.5 -> 2 pairs (GPT-NeoX: r = 5 -> 3 frequencies); exponent over n = 10.
  const auto t = geo(10, 1e4, scaling::Proportional{}, {}, Convention::huggingface, false, 0.5);
  REQUIRE(t.theta.rows() == 2);
  CHECK(t.identity_dims == 6);
  check_rel(t.theta(1), std::pow(1e4, -0.2), 2 * kEps);
  const auto notes = schedule_notes({Geometric{10, 1e4, {}, 0.5}, scaling::Proportional{}});
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("2 rotating pairs, 3 identity pairs") != std::string::npos);
  // p = 1: every pair, base^(-2i/n): plain RoPE's grid.
  const auto full = geo(64, 1e4, scaling::Proportional{}), plain = geo(64, 1e4);
  CHECK(full.theta == plain.theta);
  CHECK(full.identity_dims == 0);
  CHECK_THROWS_WITH_AS(geo(64, 1e4, scaling::Proportional{}, {}, Convention::huggingface, false, 1.0 / 64),
                       doctest::Contains("partial = 0.015625 (must be such that floor(partial * dim / 2) >= 1"),
                       InputError);
  CHECK_THROWS_WITH_AS(geo(64, 1e4, scaling::Proportional{}, {}, Convention::huggingface, false, 0.5, 8),
                       doctest::Contains("count = 8 (must be left out with scaling proportional"), InputError);
  CHECK_THROWS_WITH_AS(frequencies({ExplicitFrequencies{{1, 0.1}, ""}, scaling::Proportional{}}),
                       doctest::Contains("scaling = proportional"), InputError);
}

TEST_CASE("linear divides every frequency by the factor") {
  const auto t = geo(128, 1e4, scaling::Linear{4});
  for (int i = 0; i < 64; ++i) {
    CHECK(t.theta(i) == t.unscaled(i) / 4);  // a power-of-two factor divides exactly
  }
  const auto u = geo(96, 1e4, scaling::Linear{3});
  for (int i = 0; i < 48; ++i) check_rel(u.unscaled(i) / u.theta(i), 3, 2 * kEps);  // two roundings
}

TEST_CASE("ntk: theta_i = (B s^{r/(r-2)})^{-2i/r}, and dynamic = ntk with factor sT/L0 - (s-1) above L0") {
  for (const int dim : {128, 64, 96}) {
    const auto t = geo(dim, 1e4, scaling::Ntk{8});
    for (int i = 0; i < dim / 2; ++i) {
      const double expected = std::exp(-(2.0 * i / dim) * (std::log(1e4) + dim / (dim - 2.0) * std::log(8.0)));
      check_rel(t.theta(i), expected, exp_tol(1e4 * std::pow(8.0, dim / (dim - 2.0)), dim, i, 8));  // + the base's pow
    }
    CHECK(t.unscaled == geo(dim, 1e4).theta);
  }
  const scaling::Dynamic d{.factor = 4, .orig = 4096};
  for (const double T : {1.0, 2048.0, 4096.0}) CHECK(geo(128, 1e4, d, T).theta == geo(128, 1e4).theta);
  for (const double T : {4097.0, 8192.0, 50000.0}) {
    CAPTURE(T);
    const double adjusted = 4 * T / 4096 - (4 - 1);
    CHECK(geo(128, 1e4, d, T).theta == geo(128, 1e4, scaling::Ntk{adjusted}).theta);
  }
  // The frequencies fall as T grows.
  CHECK(geo(128, 1e4, d, 20000.0).theta(10) < geo(128, 1e4, d, 10000.0).theta(10));
}

TEST_CASE("yarn: theta'_i = theta_i/s ramp_i + theta_i (1 - ramp_i), ramp by std::clamp on the correction dims") {
  struct Case {
    int dim;
    double base, partial, s, L0, beta_fast, beta_slow;
    bool truncate;
  };
  for (const Case& c : {Case{128, 1e4, 1, 16, 4096, 32, 1, true}, Case{128, 1e4, 1, 16, 4096, 32, 1, false},
                        Case{128, 1e6, 1, 4, 32768, 32, 1, true}, Case{128, 1e4, 0.5, 8, 4096, 32, 1, true},
                        Case{64, 1e4, 1, 40, 4096, 16, 2, false}, Case{128, 5e5, 1, 2, 8, 32, 1, true}}) {
    CAPTURE(c.dim);
    CAPTURE(c.partial);
    CAPTURE(c.truncate);
    const int r = static_cast<int>(c.dim * c.partial);
    scaling::Yarn y{.factor = c.s, .orig = c.L0, .beta_fast = c.beta_fast, .beta_slow = c.beta_slow};
    y.truncate = c.truncate;
    const auto t = geo(c.dim, c.base, y, {}, Convention::huggingface, false, c.partial);
    double low = correction_dim(r, c.base, c.L0, c.beta_fast), high = correction_dim(r, c.base, c.L0, c.beta_slow);
    if (c.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);  // HF clamps low from below and high from above only
    high = std::min(high, r - 1.0);
    const double width = high == low ? 0.001 : high - low;
    REQUIRE(t.theta.rows() == r / 2);
    for (int i = 0; i < r / 2; ++i) {
      CAPTURE(i);
      const double theta = theta_exp(c.base, r, i);
      const double ramp = std::clamp((i - low) / width, 0.0, 1.0);
      check_rel(t.theta(i), theta / c.s * ramp + theta * (1 - ramp), exp_tol(c.base, r, i, 8));  // + the blend's roundings
      if (i <= low) CHECK(t.theta(i) == t.unscaled(i));  // pure extrapolation: the unscaled value itself
    }
    check_rel(t.attention_factor, c.s > 1 ? 0.1 * std::log(c.s) + 1 : 1, 2 * kEps);
  }
}

TEST_CASE("yarn attention factor: mscale ratio, attention_factor override, lone mscale ignored (HF)") {
  scaling::Yarn y{.factor = 40, .orig = 4096};
  y.mscale = 0.707;
  CHECK(yarn_attention_factor(y) == yarn_mscale(40));  // HF needs both keys
  y.mscale_all_dim = 0.707;
  CHECK(yarn_attention_factor(y) == 1);  // DeepSeek-V2: equal keys cancel
  y.mscale = 1;
  check_rel(yarn_attention_factor(y), (0.1 * std::log(40) + 1) / (0.0707 * std::log(40) + 1), 4 * kEps);
  y.attention_factor = 1.25;
  CHECK(yarn_attention_factor(y) == 1.25);
}

TEST_CASE("yarn under convention ggml: truncated dims, a multiplied by 1 + 0.1 ln s") {
  scaling::Yarn y{.factor = 16, .orig = 4096};
  const auto hf = geo(128, 1e4, y), gg = geo(128, 1e4, y, {}, Convention::ggml);
  for (int i = 0; i < 64; ++i) check_rel(gg.theta(i), hf.theta(i), 4 * kEps);  // 1/(s pos) vs (1/s)(1/pos)
  CHECK(gg.attention_factor == hf.attention_factor);  // a0 = 1: the same factor
  y.attention_factor = 1.5;
  check_rel(geo(128, 1e4, y, {}, Convention::ggml).attention_factor, 1.5 * (1 + 0.1 * std::log(16)), 2 * kEps);
  CHECK(geo(128, 1e4, y).attention_factor == 1.5);
  // float32 ggml: the running product of powf(B, -2/r) and logf-based correction dims, as ggml_rope_cache_init.
  const auto g32 = geo(128, 1e4, scaling::Yarn{.factor = 16, .orig = 4096}, {}, Convention::ggml, true);
  const float scale = std::pow(1e4f, -2.0f / 128);
  float theta = 1;
  for (int i = 0; i < 64; ++i) {
    CHECK(g32.unscaled(i) == static_cast<double>(theta));
    theta *= scale;
  }
  CHECK(g32.theta(0) == 1);  // below low: pure extrapolation
  CHECK(g32.attention_factor == static_cast<double>(1.0f + 0.1f * std::log(1.0f / (1.0f / 16.0f))));
}

TEST_CASE("longrope: theta_i / lambda_i, long factors only above the original length") {
  std::vector<double> sf(48), lf(48);
  for (int i = 0; i < 48; ++i) {
    sf[static_cast<std::size_t>(i)] = 1 + 0.01 * i;
    lf[static_cast<std::size_t>(i)] = 1 + 0.5 * i;
  }
  scaling::LongRope l{.short_factor = sf, .long_factor = lf, .orig = 4096};
  l.max = 131072;
  for (const auto& [T, use_long] : {std::pair{std::optional<double>{}, false}, std::pair{std::optional(4096.0), false},
                                    std::pair{std::optional(4097.0), true}}) {
    const auto t = geo(96, 1e4, l, T);
    const auto& lambda = use_long ? lf : sf;
    for (int i = 0; i < 48; ++i)
      check_rel(t.theta(i), theta_exp(1e4, 96, i) / lambda[static_cast<std::size_t>(i)], exp_tol(1e4, 96, i, 6));
    check_rel(t.attention_factor, std::sqrt(1 + std::log(32.0) / std::log(4096.0)), 2 * kEps);
  }
  l.max.reset();
  CHECK(geo(96, 1e4, l).attention_factor == 1);  // no max: s = 1
  l.attention_factor = 1.3;
  CHECK(geo(96, 1e4, l).attention_factor == 1.3);
}

TEST_CASE("explicit frequencies: as given; linear, llama3 and longrope apply") {
  const std::vector<double> v{2.0, 0.5, 1e-3, 1e-5};
  const FrequencySchedule plain{ExplicitFrequencies{v, ""}, scaling::None{}};
  const auto t = frequencies(plain);
  for (int i = 0; i < 4; ++i) CHECK(t.theta(i) == v[static_cast<std::size_t>(i)]);
  const auto lin = frequencies({ExplicitFrequencies{v, ""}, scaling::Linear{2}});
  for (int i = 0; i < 4; ++i) CHECK(lin.theta(i) == v[static_cast<std::size_t>(i)] / 2);
  const auto ll = frequencies({ExplicitFrequencies{v, ""}, scaling::Llama3{.orig = 8192}});
  CHECK(ll.theta(0) == 2.0);       // wavelength pi < 2048: kept
  CHECK(ll.theta(3) == 1e-5 / 8);  // wavelength 6.3e5 > 8192: divided
  const auto lr = frequencies({ExplicitFrequencies{v, ""}, scaling::LongRope{.short_factor = {1, 2, 4, 8},
                                                                             .long_factor = {1, 1, 1, 1},
                                                                             .orig = 4096}});
  CHECK(lr.theta(3) == 1e-5 / 8);
}

// PyTorch's CPU `base ** (arange(0, dim, 2).float() / dim)` (tests/data/transformers/pow.csv, captured with torch 2.11).
std::vector<float> torch_cpu_pow(const std::string& base, int dim) {
  std::ifstream f(std::string(ROPEKIT_SOURCE_DIR) + "/tests/data/transformers/pow.csv");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(base + "," + std::to_string(dim) + ",cpu,", 0) != 0) continue;
    std::stringstream bits(line.substr(line.rfind(',') + 1));
    std::vector<float> out;
    for (std::string h; bits >> h;) out.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(h, nullptr, 16))));
    return out;
  }
  return {};
}

TEST_CASE("float32 emulates torch's float inv_freq; within 2 float ulps of the float64 values when 2i/r is exact") {
  // Each theta below is 1 / (torch's own CPU pow), as torch computes it; the library must agree exactly. Against
  // float64: pow rounds (1/2 ulp), the reciprocal rounds (1/2 ulp), rounding the double value to float costs 1/2 ulp:
  // <= 1.5 ulps, so 2. For r = 96, 2i/r is itself rounded, adding up to (2i/r) ln B ulps.
  for (const int dim : {128, 96}) {
    CAPTURE(dim);
    const auto t32 = geo(dim, 1e4, scaling::None{}, {}, Convention::huggingface, true);
    const auto t64 = geo(dim, 1e4);
    const auto pw = torch_cpu_pow("10000.0", dim);
    REQUIRE(pw.size() == static_cast<std::size_t>(dim / 2));
    for (int i = 0; i < dim / 2; ++i) {
      CAPTURE(i);
      const float x = static_cast<float>(2 * i) / static_cast<float>(dim);
      const float expected = 1.0f / pw[static_cast<std::size_t>(i)];
      CHECK(t32.theta(i) == static_cast<double>(expected));
      const float d = static_cast<float>(t64.theta(i));
      const double allowed = (dim == 128 ? 2.0 : 2.0 + x * std::log(1e4)) * ulp(d);
      CHECK(std::abs(t32.theta(i) - t64.theta(i)) <= allowed);
    }
  }
  // Schemes in float: linear, llama3 and yarn, written out as torch computes them.
  const auto lin = geo(128, 1e4, scaling::Linear{3}, {}, Convention::huggingface, true);
  const auto lin64 = geo(128, 1e4, scaling::Linear{3});
  const auto ll = geo(128, 5e5, scaling::Llama3{.orig = 8192}, {}, Convention::huggingface, true);
  const auto ya = geo(128, 1e4, scaling::Yarn{.factor = 16, .orig = 4096}, {}, Convention::huggingface, true);
  for (int i = 0; i < 64; ++i) {
    CAPTURE(i);
    const float inv = 1.0f / std::pow(1e4f, static_cast<float>(2 * i) / 128.0f);
    CHECK(lin.theta(i) == static_cast<double>(inv / 3.0f));
    CHECK(std::abs(lin.theta(i) - lin64.theta(i)) <= 3 * ulp(static_cast<float>(lin64.theta(i))));  // + the division's 1/2 ulp
    const float inv5 = 1.0f / std::pow(5e5f, static_cast<float>(2 * i) / 128.0f);
    const float wl = static_cast<float>(2 * std::numbers::pi) / inv5;
    float e;
    if (wl > 8192.0f) {
      e = inv5 / 8.0f;
    } else if (wl < 2048.0f) {
      e = inv5;
    } else {
      const float g = (8192.0f / wl - 1.0f) / 3.0f;
      e = (1.0f - g) * inv5 / 8.0f + g * inv5;
    }
    CHECK(ll.theta(i) == static_cast<double>(e));
    const float pos = std::pow(1e4f, static_cast<float>(2 * i) / 128.0f);
    const float ramp = std::clamp((static_cast<float>(i) - 20.0f) / 26.0f, 0.0f, 1.0f);  // range [20, 46] (public)
    const float ext = 1.0f - ramp;
    CHECK(ya.theta(i) == static_cast<double>(1.0f / (16.0f * pos) * (1.0f - ext) + 1.0f / pos * ext));
  }
  // Explicit values are rounded to float first.
  const auto ex = frequencies({ExplicitFrequencies{{0.1, 1.0 / 3}, ""}, scaling::None{}}, {}, Convention::huggingface, true);
  CHECK(ex.theta(0) == static_cast<double>(0.1f));
  CHECK(ex.theta(1) == static_cast<double>(1.0f / 3.0f));
}

TEST_CASE("sampled frequencies without a seed: the quantile grid Q((i + 1/2)/D)") {
  const Spectrum s = spectral::Gaussian{.sigma = 2};
  const auto t = frequencies({SampledFrequencies{s, 16, {}, Sampling::iid}, scaling::None{}});
  const auto Q = make_quantile(s);
  REQUIRE(t.theta.rows() == 16);
  for (int i = 0; i < 16; ++i) CHECK(t.theta(i) == Q((i + 0.5) / 16));
  for (int i = 1; i < 16; ++i) CHECK(t.theta(i) > t.theta(i - 1));
  CHECK(t.theta(7) == doctest::Approx(-t.theta(8)).epsilon(1e-12));  // symmetric density: quantiles pair up (Q's own accuracy)
  CHECK(frequencies({SampledFrequencies{s, 16, {}, Sampling::stratified}, scaling::None{}}).theta == t.theta);
}

TEST_CASE("seeded draws: reproducible, the definitions of monte_carlo.cpp, iid mean of cos(w lag) -> Phi") {
  const std::uint64_t seed = test_seed(20240521);
  CAPTURE(seed);
  const Spectrum s = spectral::Gaussian{.sigma = 3};
  const auto draw = [&](int D, Sampling m, std::uint64_t sd) {
    return frequencies({SampledFrequencies{s, D, sd, m}, scaling::None{}}).theta;
  };
  const bool same_seed_same_draws = draw(33, Sampling::iid, seed) == draw(33, Sampling::iid, seed);
  const bool other_seed_other_draws = draw(33, Sampling::iid, seed) != draw(33, Sampling::iid, seed + 1);
  CHECK(same_seed_same_draws);
  CHECK(other_seed_other_draws);
  {
    Rng rng(seed, kStreamScheduleFrequencies, 0);
    std::vector<double> w(33);
    sample(s, rng, 33, w.data());
    const auto t = draw(33, Sampling::iid, seed);
    for (int i = 0; i < 33; ++i) CHECK(t(i) == w[static_cast<std::size_t>(i)]);
  }
  const auto anti = draw(33, Sampling::antithetic, seed);
  for (int j = 0; j < 16; ++j) CHECK(anti(2 * j + 1) == -anti(2 * j));
  const auto strat = draw(40, Sampling::stratified, seed);
  std::vector<double> u(40);
  const boost::math::normal_distribution<double> normal(0, 1 / 3.0);
  for (int i = 0; i < 40; ++i) u[static_cast<std::size_t>(i)] = cdf(normal, strat(i));
  std::sort(u.begin(), u.end());
  for (int i = 0; i < 40; ++i) {
    CHECK(u[static_cast<std::size_t>(i)] >= i / 40.0 - 1e-12);  // one draw per stratum (cdf round trip ~1e-15)
    CHECK(u[static_cast<std::size_t>(i)] <= (i + 1) / 40.0 + 1e-12);
  }
  // k-D: one column per dimension.
  const Spectrum s2 = spectral::Gaussian{.sigma = 1, .dims = 2};
  const auto t2 = frequencies({SampledFrequencies{s2, 10, seed, Sampling::antithetic}, scaling::None{}}).theta;
  CHECK(t2.cols() == 2);
  const bool antithetic_rows = t2.row(1) == -t2.row(0);
  CHECK(antithetic_rows);

  // Monte Carlo: mean of cos(w lag) over D iid draws against Phi, bound z_{1e-6} sd/sqrt(D).
  const int D = 200000;
  const auto w = draw(D, Sampling::iid, seed);
  const double lag = 5, lags[1] = {lag};  // Phi = exp(-25/18) ~ 0.25, Var[cos] ~ 0.44
  const KernelValues kv = kernel_values(s, lags);
  double mean = 0;
  for (int i = 0; i < D; ++i) mean += std::cos(w(i) * lag);
  mean /= D;
  const double z = boost::math::quantile(boost::math::complement(boost::math::normal_distribution<double>(), 0.5e-6));
  const double bound = z * std::sqrt(kv.var_cos / D);
  CAPTURE(mean);
  CAPTURE(kv.phi);
  CAPTURE(bound);
  CHECK(std::abs(mean - kv.phi) <= bound);
  // Power: the kernel of a 5% wider spectrum lies well outside the bound (0.034 vs ~0.007).
  const double wrong = phi(Spectrum{spectral::Gaussian{.sigma = 3 * 1.05}}, lags);
  CHECK(std::abs(wrong - kv.phi) > 2 * bound);
}

TEST_CASE("spellings parse back to the same scheme") {
  scaling::Yarn y{.factor = 32, .orig = 4096};
  CHECK(spelling(y) == "yarn(factor=32,orig=4096,beta_fast=32,beta_slow=1,truncate=true)");
  y.truncate = false;
  y.beta_fast = 16;
  y.mscale = 0.707;
  y.mscale_all_dim = 0.707;
  CHECK(spelling(y) ==
        "yarn(factor=32,orig=4096,beta_fast=16,beta_slow=1,truncate=false,mscale=0.707,mscale_all_dim=0.707)");
  scaling::LongRope l{.short_factor = {1, 1.05, 1.1}, .long_factor = {2, 3.5, 8}, .orig = 4096};
  l.max = 131072;
  CHECK(spelling(l) == "longrope(short=[1,1.05,1.1],long=[2,3.5,8],orig=4096,max=131072)");
  CHECK(spelling(scaling::Llama3{.orig = 8192}) == "llama3(factor=8,orig=8192,low=1,high=4)");
  CHECK(spelling(scaling::None{}) == "none");
  const std::vector<Scaling> all = {scaling::None{}, scaling::Linear{2.5}, scaling::Ntk{8},
                                    scaling::Dynamic{3, 2048}, y, l,
                                    scaling::Llama3{.factor = 32, .low = 0.5, .high = 6, .orig = 8192},
                                    scaling::Yarn{.factor = 1.0 / 3 + 1, .orig = 4096, .attention_factor = 0.1 + 0.2}};
  for (const Scaling& s : all) {
    const std::string text = spelling(s);
    CAPTURE(text);
    const auto [name, keys] = split_spelling(text);
    CHECK(scheme_name(s) == name);
    CHECK(spelling(parse_scaling(name, keys)) == text);
  }
  CHECK(parse_bracketed_numbers(" [ 1, 1.05 ,1e-3] ", Where(), "x") == std::vector<double>{1, 1.05, 1e-3});
}

TEST_CASE("bad inputs throw InputError naming the key") {
  using M = std::map<std::string, std::string>;
  const auto parse_throws = [](const std::string& name, const M& keys, const std::string& mention) {
    CAPTURE(name);
    CAPTURE(mention);
    CHECK_THROWS_WITH_AS(parse_scaling(name, keys, Where("ropekit encoding")), doctest::Contains(mention.c_str()), InputError);
  };
  parse_throws("rotate", {}, "scaling = rotate (must be one of none, linear");
  parse_throws("yarn", {{"factor", "2"}, {"orig", "4096"}, {"fast", "3"}}, "yarn.fast = 3 (must be a key of yarn: factor, orig");
  parse_throws("yarn", {{"orig", "4096"}}, "yarn.factor = (missing) (must be given: yarn needs factor or max)");
  // orig has no default: a scheme spelled by hand names the model's own context length.
  for (const char* scheme : {"yarn", "dynamic", "llama3"})
    parse_throws(scheme, {{"factor", "2"}}, fmt::format("{}.orig = (missing) (must be given: {} needs orig, the model's "
                                                        "original context length", scheme, scheme));
  parse_throws("longrope", {{"short", "[1]"}, {"long", "[1]"}}, "longrope.orig = (missing) (must be given");
  parse_throws("longrope", {{"short", "[1]"}}, "longrope.long = (missing)");
  parse_throws("linear", {{"factor", "two"}}, "linear.factor = two (must be a number)");
  parse_throws("linear", {{"factor", "0"}}, "linear.factor = 0 (must be finite and > 0)");  // below 1: a note
  parse_throws("ntk", {{"factor", "nan"}}, "ntk.factor = nan");
  parse_throws("dynamic", {{"factor", "2"}, {"orig", "inf"}}, "dynamic.orig = inf");
  parse_throws("yarn", {{"factor", "2"}, {"orig", "4096"}, {"truncate", "yes"}}, "yarn.truncate = yes (must be true or false)");
  // beta_fast <= beta_slow and a zero mscale are accepted with a note (test_transformers_options.cpp).
  parse_throws("yarn", {{"factor", "2"}, {"orig", "4096"}, {"beta_slow", "-1"}}, "yarn.beta_slow = -1 (must be finite and >= 0)");
  parse_throws("yarn", {{"factor", "2"}, {"orig", "4096"}, {"mscale", "-1"}}, "yarn.mscale = -1");
  parse_throws("yarn", {{"factor", "2"}, {"orig", "4096"}, {"attention_factor", "-1"}}, "yarn.attention_factor = -1");
  parse_throws("longrope", {{"short", "1,2"}, {"long", "[1]"}, {"orig", "4096"}}, "longrope.short = 1,2 (must be a list of numbers");
  parse_throws("longrope", {{"short", "[1,x]"}, {"long", "[1]"}, {"orig", "4096"}}, "longrope.short[1] = x (must be a number)");
  parse_throws("longrope", {{"short", "[]"}, {"long", "[1]"}, {"orig", "4096"}}, "longrope.short = []");
  parse_throws("longrope", {{"short", "[1,0]"}, {"long", "[1]"}, {"orig", "4096"}}, "longrope.short[1] = 0");
  parse_throws("longrope", {{"short", "[1]"}, {"long", "[1]"}, {"orig", "4096"}, {"max", "-5"}}, "longrope.max = -5");
  parse_throws("llama3", {{"orig", "8192"}, {"low", "4"}, {"high", "0"}}, "llama3.high = 0 (must be finite and > 0)");  // <= low: a note
  parse_throws("llama3", {{"orig", "8192"}, {"low", "0"}}, "llama3.low = 0");
  parse_throws("llama3", {{"orig", "1"}}, "llama3.orig = 1 (must be finite and > 1)");
  parse_throws("none", {{"factor", "2"}}, "none.factor = 2 (must be absent");

  const auto throws = [](const FrequencySchedule& s, const std::string& mention, std::optional<double> T = {},
                         Convention c = Convention::huggingface) {
    CAPTURE(mention);
    CHECK_THROWS_WITH_AS(frequencies(s, T, c), doctest::Contains(mention.c_str()), InputError);
  };
  throws({Geometric{63, 1e4}, scaling::None{}}, "dim = 63 (must be an even integer >= 2)");
  throws({Geometric{64, 1e4, {}, 0.01}, scaling::None{}}, "partial = 0.01 (must be such that int(dim * partial) >= 1");
  throws({Geometric{64, 1e4, {}, 0.0}, scaling::None{}}, "partial = 0 (must be in (0, 1])");
  throws({Geometric{64, 1e4, {}, std::nan("")}, scaling::None{}}, "partial = nan");
  throws({Geometric{64, 1e4, {}, 1.0 / 128}, scaling::None{}}, "partial = 0.0078125");  // r = int(0.5) = 0
  throws({Geometric{64, -1}, scaling::None{}}, "base = -1 (must be finite and > 0)");
  throws({Geometric{64, std::nan("")}, scaling::None{}}, "base = nan");
  throws({Geometric{64, 0.5}, scaling::Linear{2}}, "base = 0.5 (must be > 1 with scaling linear)");
  throws({Geometric{64, 1e4, 0}, scaling::None{}}, "count = 0 (must be an integer in [1, 16777216])");
  throws({Geometric{64, 1e4, kMaxFrequencies + 1}, scaling::None{}}, "count = 16777217");
  throws({Geometric{2, 1e4}, scaling::Ntk{2}}, "dim = 2 (must be such that the rotary dims are >= 4");
  throws({Geometric{64, 1e4}, scaling::Dynamic{2, 4096}}, "scaling dynamic needs the current sequence length (--seq-len)");
  throws({Geometric{64, 1e4}, scaling::Dynamic{2, 4096}}, "seq_len = -1", -1.0);
  throws({Geometric{64, 1e4}, scaling::Linear{-0.5}}, "linear.factor = -0.5 (must be finite and > 0)");
  throws({Geometric{64, 1e4}, scaling::Yarn{.factor = std::numeric_limits<double>::infinity(), .orig = 4096}}, "yarn.factor = inf");
  throws({Geometric{64, 1e4}, scaling::LongRope{.short_factor = {1, 2}, .long_factor = std::vector<double>(32, 1.0), .orig = 4096}},
         "longrope.short = a list of 2 values (must be one value per frequency: 32");
  throws({Geometric{64, 1e4, 8}, scaling::LongRope{.short_factor = std::vector<double>(8, 1.0),
                                                   .long_factor = std::vector<double>(32, 1.0),
                                                   .orig = 4096}},
         "longrope.long = a list of 32 values (must be one value per frequency: 8");
  scaling::Yarn no_truncate{.factor = 4, .orig = 4096};
  no_truncate.truncate = false;
  throws({Geometric{64, 1e4}, no_truncate}, "yarn.truncate = false (must be true with convention ggml", {}, Convention::ggml);
  scaling::Yarn with_mscale{.factor = 4, .orig = 4096};
  with_mscale.mscale = 1;
  throws({Geometric{64, 1e4}, with_mscale}, "yarn.mscale = 1 (must be absent with convention ggml", {}, Convention::ggml);

  throws({ExplicitFrequencies{{}, ""}, scaling::None{}}, "values = [] (must be a non-empty list");
  throws({ExplicitFrequencies{{1, 0}, ""}, scaling::None{}}, "values[1] = 0 (must be finite and > 0)");
  throws({ExplicitFrequencies{{1, -2}, ""}, scaling::None{}}, "values[1] = -2");
  throws({ExplicitFrequencies{{1, std::nan("")}, ""}, scaling::None{}}, "values[1] = nan");
  throws({ExplicitFrequencies{{1, 2}, "f.txt"}, scaling::Linear{0}}, "linear.factor = 0");
  throws({ExplicitFrequencies{{1, -2}, "f.txt"}, scaling::None{}}, "f.txt: value 2 = -2");
  for (const Scaling& s : {Scaling{scaling::Ntk{2}}, Scaling{scaling::Dynamic{2, 4096}}, Scaling{scaling::Yarn{.factor = 2, .orig = 4096}}})
    throws({ExplicitFrequencies{{1, 2}, ""}, s}, "scaling = " + scheme_name(s) + " (must be none, linear, llama3 or longrope");
  throws({ExplicitFrequencies{{1, 2}, ""}, scaling::LongRope{.short_factor = {1}, .long_factor = {1, 1}, .orig = 4096}},
         "longrope.short = a list of 1 values (must be one value per frequency: 2)");
  CHECK_THROWS_WITH_AS(frequencies({ExplicitFrequencies{{1, 1e-60}, ""}, scaling::None{}}, {}, Convention::huggingface, true),
                       doctest::Contains("values[1] = 1e-60 (must be > 0 and finite once rounded to float32)"), InputError);

  const Spectrum g1 = spectral::Gaussian{}, g2 = spectral::Gaussian{.sigma = 1, .dims = 2};
  throws({SampledFrequencies{g1, 0}, scaling::None{}}, "count = 0 (must be an integer in [1, 16777216])");
  throws({SampledFrequencies{g1, 8}, scaling::Linear{2}}, "scaling = linear (must be none for sampled frequencies");
  throws({SampledFrequencies{g2, 8}, scaling::None{}}, "seed = (none) (must be given for a k = 2 spectrum");
  throws({SampledFrequencies{g1, 8, {}, Sampling::antithetic}, scaling::None{}}, "sampling = antithetic (must be iid or stratified without a seed");
  throws({SampledFrequencies{g2, 8, 1u, Sampling::stratified}, scaling::None{}}, "sampling = stratified (must be iid or antithetic for k = 2");
  throws({SampledFrequencies{spectral::Gaussian{.sigma = -1}, 8}, scaling::None{}}, "sigma");
}

// ---- the contract every scheme keeps (one example row per scheme; a new scheme adds its row here) ---------------

namespace {
const std::vector<std::string> kSchemeExamples = {
    "none",
    "linear(factor=4)",
    "ntk(factor=8)",
    "dynamic(factor=2,orig=2048)",
    "yarn(factor=16,orig=4096,beta_fast=24,beta_slow=1,truncate=true,mscale=0.8,mscale_all_dim=0.8)",
    "longrope(short=[1,1.5,2,2.5],long=[2,3,4,5],orig=4096,max=65536)",  // one factor per frequency: 4
    "llama3(factor=8,orig=8192,low=0.5,high=3)",
    "proportional(factor=2)",
};

Scaling parse_example(const std::string& text) {
  const auto [name, keys] = split_spelling(text);
  return parse_scaling(name, keys, Where("ropekit encoding"));
}

// A value that breaks `rule` (lists: a zero entry), and the message fragment it must produce.
std::string breaking_value(scaling::Rule rule, bool list) {
  if (list) return "[1,0]";
  switch (rule) {
    case scaling::Rule::factor: return "0";
    case scaling::Rule::orig: return "1";
    case scaling::Rule::positive: return "-1";
    case scaling::Rule::nonnegative: return "-1";
    case scaling::Rule::finite: return "inf";
    case scaling::Rule::any: return "maybe";
  }
  return "";
}
}  // namespace

TEST_CASE("every scheme: one example, spelling round trip, finite frequencies, refusals from its key table") {
  std::vector<bool> covered(std::variant_size_v<Scaling>, false);
  for (const std::string& text : kSchemeExamples) {
    CAPTURE(text);
    const Scaling s = parse_example(text);
    covered[s.index()] = true;
    CHECK(spelling(s) == text);
    CHECK(spelling(parse_example(spelling(s))) == text);
    // Geometric frequencies in float64 and float32 (4 frequencies on r = 8), at a length beyond every L0.
    for (bool f32 : {false, true}) {
      const FrequencyTable t = frequencies({Geometric{8, 1e4}, s}, 1e5, Convention::huggingface, f32);
      REQUIRE(t.theta.rows() == 4);
      CHECK(t.unscaled.rows() == 4);
      CHECK(t.identity_dims == 0);
      CHECK((t.theta.array() > 0).all());
      CHECK(t.theta.allFinite());
      CHECK(t.attention_factor > 0);
      CHECK(std::isfinite(t.attention_factor));
    }
    CHECK(frequencies({Geometric{16, 1e4, {}, 0.5}, s}, 1e5).identity_dims == 8);
    // Explicit frequencies: scaled, or refused naming the scheme.
    const FrequencySchedule given{ExplicitFrequencies{{1, 0.1, 0.01, 0.001}, ""}, s};
    try {
      const FrequencyTable t = frequencies(given, 1e5);
      CHECK((t.theta.array() > 0).all());
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("scaling = " + scheme_name(s) + " (must be none, linear") != std::string::npos);
    }
    // Every key of the table: a breaking value names "<scheme>.<key>"; an unknown key lists the scheme's keys.
    std::visit(
        [&]<class S>(const S& x) {
          const auto [name, keys] = split_spelling(text);
          for (const auto& k : scheme_keys(x)) {
            const bool list = k.list;
            auto bad = keys;
            bad[std::string(k.name)] = breaking_value(k.rule, list);
            const std::string key = fmt::format("{}.{}", S::name, k.name);
            CAPTURE(key);
            CHECK_THROWS_WITH_AS(parse_scaling(name, bad), doctest::Contains((key + (list ? "[1] = 0" : " = ")).c_str()),
                                 InputError);
            if (k.required) {
              auto missing = keys;
              missing.erase(std::string(k.name));
              CHECK_THROWS_WITH_AS(parse_scaling(name, missing), doctest::Contains((key + " = (missing)").c_str()),
                                   InputError);
            }
          }
          auto unknown = keys;
          unknown["no_such_key"] = "1";
          CHECK_THROWS_WITH_AS(parse_scaling(name, unknown), doctest::Contains(fmt::format("{}.no_such_key = 1", S::name).c_str()),
                               InputError);
        },
        s);
  }
  for (std::size_t i = 0; i < covered.size(); ++i) {
    CAPTURE(i);
    CHECK(covered[i]);  // every alternative of Scaling has its example row above
  }
}

TEST_CASE("canonical spellings write every key, defaults included, and read back to the same frequencies") {
  // Short hand spellings and their full spellings, written out from the key tables' order and the structs'
  // defaults (llama3: low 1, high 4; yarn: beta_fast 32, beta_slow 1, truncate true, as transformers).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"llama3(factor=8,orig=8192)", "llama3(factor=8,orig=8192,low=1,high=4)"},
      {"llama3(orig=8192)", "llama3(factor=8,orig=8192,low=1,high=4)"},
      {"yarn(factor=8,orig=4096)", "yarn(factor=8,orig=4096,beta_fast=32,beta_slow=1,truncate=true)"},
      {"yarn(max=32768,orig=4096)", "yarn(orig=4096,max=32768,beta_fast=32,beta_slow=1,truncate=true)"},
      {"yarn(orig=4096,factor=4,attention_factor=1.5)",
       "yarn(factor=4,orig=4096,beta_fast=32,beta_slow=1,truncate=true,attention_factor=1.5)"},
      {"dynamic(orig=2048,factor=2)", "dynamic(factor=2,orig=2048)"},
      {"longrope(long=[2,3,4,5],short=[1,1,1,1],orig=4096)", "longrope(short=[1,1,1,1],long=[2,3,4,5],orig=4096)"},
      {"proportional", "proportional(factor=1)"},
      {"linear(factor=4)", "linear(factor=4)"},
      {"ntk(factor=8)", "ntk(factor=8)"},
      {"none", "none"},
  };
  std::vector<bool> covered(std::variant_size_v<Scaling>, false);
  for (const auto& [hand, full] : cases) {
    CAPTURE(hand);
    const Scaling s = parse_example(hand);
    covered[s.index()] = true;
    CHECK(spelling(s) == full);
    const Scaling back = parse_example(spelling(s));
    CHECK(spelling(back) == full);
    // The same encoding: the printed spelling gives bit-identical frequencies and attention factor.
    const FrequencyTable a = frequencies({Geometric{8, 1e4}, s}, 1e5), b = frequencies({Geometric{8, 1e4}, back}, 1e5);
    CHECK(a.theta == b.theta);
    CHECK(a.attention_factor == b.attention_factor);
  }
  for (std::size_t i = 0; i < covered.size(); ++i) {
    CAPTURE(i);
    CHECK(covered[i]);
  }
  // Every key that holds a value is written: only unset optionals (transformers' fallbacks) are left out.
  for (const std::string& text : kSchemeExamples) {
    CAPTURE(text);
    std::visit(
        [&]<class S>(const S& x) {
          const std::string full = spelling(Scaling(x));
          for (const auto& k : scheme_keys(x)) {
            CAPTURE(k.name);
            const bool written = full.find(fmt::format("({}=", k.name)) != std::string::npos ||
                                 full.find(fmt::format(",{}=", k.name)) != std::string::npos;
            CHECK(written == (!k.number || k.number(x).has_value()));
          }
        },
        parse_example(text));
  }
}

TEST_CASE("list schemes: one row per key of every scheme, with transformers' keys") {
  const auto& rows = scheme_key_infos();
  // Against the key tables: every key of every alternative, in order.
  std::size_t expected = 0;
  int defaults_checked = 0;
  for (const std::string& text : kSchemeExamples)
    std::visit(
        [&]<class S>(const S& x) {
          for (const auto& k : scheme_keys(x)) {
            CAPTURE(k.name);
            REQUIRE(expected < rows.size());
            CHECK(rows[expected].scheme == S::name);
            CHECK(rows[expected].key == k.name);
            CHECK(!rows[expected].meaning.empty());
            CHECK(!rows[expected].hf_key.empty());
            // The default shown is what the parser takes for the absent key: the example without the key and
            // with key=<the default shown> are one scheme (words: required ones, and unset optionals, skipped).
            const std::string& shown = rows[expected].default_value;
            CHECK(!shown.empty());
            if (!k.required && k.unless.empty() && shown != "unset") {
              auto [name, keys] = split_spelling(text);
              keys.erase(std::string(k.name));
              const Scaling absent = parse_scaling(name, keys, Where("test"));
              keys[std::string(k.name)] = shown;
              CHECK(spelling(absent) == spelling(parse_scaling(name, keys, Where("test"))));
              ++defaults_checked;
            }
            ++expected;
          }
        },
        parse_example(text));
  CHECK(rows.size() == expected);
  CHECK(defaults_checked >= 7);  // llama3's factor, low, high; yarn's beta_fast, beta_slow, truncate; proportional's
  // Against transformers' modeling_rope_utils.py, by hand: llama3 reads factor, low_freq_factor, high_freq_factor
  // and original_max_position_embeddings (all required there); yarn reads factor, original_max_position_embeddings,
  // beta_fast (`or 32`), beta_slow (`or 1`), mscale, mscale_all_dim, attention_factor and truncate (default True).
  struct Hand {
    std::string scheme, key, hf, default_value;
  };
  const std::vector<Hand> hand = {
      {"llama3", "factor", "factor", "8"},
      {"llama3", "low", "low_freq_factor", "1"},
      {"llama3", "high", "high_freq_factor", "4"},
      {"llama3", "orig", "original_max_position_embeddings", "required"},
      {"yarn", "factor", "factor", "required unless max"},
      {"yarn", "orig", "original_max_position_embeddings", "required"},
      {"yarn", "beta_fast", "beta_fast", "32"},
      {"yarn", "beta_slow", "beta_slow", "1"},
      {"yarn", "mscale", "mscale", "unset"},
      {"yarn", "mscale_all_dim", "mscale_all_dim", "unset"},
      {"yarn", "attention_factor", "attention_factor", "unset"},
      {"yarn", "truncate", "truncate", "true"},
      {"yarn", "max", "config.max_position_embeddings", "unset"},
  };
  for (const auto& h : hand) {
    CAPTURE(h.scheme);
    CAPTURE(h.key);
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.scheme == h.scheme && r.key == h.key; });
    REQUIRE(it != rows.end());
    CHECK(it->hf_key == h.hf);
    CHECK(it->default_value == h.default_value);
  }
  for (const char* scheme : {"llama3", "yarn"}) {
    const auto n = std::count_if(rows.begin(), rows.end(), [&](const auto& r) { return r.scheme == scheme; });
    CHECK(n == std::count_if(hand.begin(), hand.end(), [&](const Hand& h) { return h.scheme == scheme; }));
  }
  // Every scheme with an original length requires it.
  for (const auto& r : rows)
    if (r.key == "orig") CHECK(r.default_value == "required");
}

TEST_CASE("ggml_rope: what llama.cpp's rope kernel takes of each scheme, and which buffers hold zero frequencies") {
  using namespace ropekit;
  // llama.cpp passes freq_scale = 1 / factor for linear and YaRN (llama-model.cpp: rope_freq_scale_train), 1 with
  // no scaling; NTK, dynamic, llama3, longrope and proportional never reach ggml_rope_ext as such.
  const auto none = scheme_ggml_rope(Scaling{scaling::None{}}, 1e4, 128, 64);
  REQUIRE(none);
  CHECK(none->freq_scale == 1.0f);
  CHECK(none->ramp.empty());
  const auto linear = scheme_ggml_rope(Scaling{scaling::Linear{8}}, 1e4, 128, 64);
  REQUIRE(linear);
  CHECK(linear->freq_scale == 0.125f);
  scaling::Yarn y;
  y.factor = 4;
  y.orig = 4096;
  const auto yarn = scheme_ggml_rope(Scaling{y}, 1e4, 128, 64);
  REQUIRE(yarn);
  CHECK(yarn->freq_scale == 0.25f);
  REQUIRE(yarn->ramp.size() == 64);
  // rope_yarn's ramp: the fastest pairs extrapolate (weight 1), the slowest interpolate (weight 0).
  CHECK(yarn->ramp.front() == 1.0f);
  CHECK(yarn->ramp.back() == 0.0f);
  CHECK_FALSE(scheme_ggml_rope(Scaling{scaling::Ntk{2}}, 1e4, 128, 64));
  CHECK_FALSE(scheme_ggml_rope(Scaling{scaling::Proportional{}}, 1e4, 128, 64));
  CHECK(scheme_zero_identity_pairs(Scaling{scaling::Proportional{}}));
  CHECK_FALSE(scheme_zero_identity_pairs(Scaling{scaling::Linear{8}}));
  CHECK_FALSE(scheme_zero_identity_pairs(Scaling{scaling::None{}}));
}
