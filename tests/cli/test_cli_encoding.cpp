// The encoding commands as a user meets them (kernel --encoding, frequencies, features --encoding, list encodings,
// check): every command run from the binary, its numbers against values written out here independently of the
// library (closed forms, the spec's public values), and bad input (exit 2, one error line, no output file).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "reports/table.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;

namespace {

ropekit::CsvData csv(const std::string& text) { return ropekit::parse_csv(text, "stdout"); }
double num(const std::string& s) { return ropekit::parse_double(s).value(); }

// The cell of `column` in row r.
const std::string& cell(const ropekit::CsvData& t, std::size_t r, const std::string& column) {
  const auto it = std::find(t.columns.begin(), t.columns.end(), column);
  REQUIRE(it != t.columns.end());
  return t.rows.at(r)[static_cast<std::size_t>(it - t.columns.begin())];
}

// Rows of `encoding` (canonical spelling) whose quantity is `quantity`, from `ropekit check`'s table.
std::vector<std::vector<std::string>> quantity_rows(const ropekit::CsvData& t, const std::string& prefix,
                                                    const std::string& quantity) {
  std::vector<std::vector<std::string>> out;
  for (const auto& row : t.rows)
    if (row[0].rfind(prefix, 0) == 0 && row[1] == quantity) out.push_back(row);
  return out;
}

const std::vector<std::string> kKernelColumns = {"encoding",          "lag",           "kernel",
                                                 "content_variance",  "expected_kernel", "frequency_variance",
                                                 "sine_residual",     "continuum",     "continuum_sine"};

}  // namespace

TEST_CASE("kernel --encoding: rope d = 4, B = 100 at lag 3 is (cos 3 + cos 0.3)/2; content variance n + rho^2 n Phi(2 Dp)") {
  const auto r = run_ropekit("kernel --encoding rope:dim=4,base=100 --lags 0,3,-7.5 --rho 0.5");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const auto t = csv(r.out);
  // Every column whatever the encodings (issue 24): a plain rope fills the sine residual and continuum, not rf-rope's.
  CHECK(t.columns == kKernelColumns);
  REQUIRE(t.rows.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const double d = num(t.rows[i][1]);
    CAPTURE(d);
    CHECK(t.rows[i][0] == "rope:dim=4,base=100,F=2");  // the canonical spelling: what was computed
    // theta = 100^0 = 1 and 100^(-1/2) = 0.1; Phi(d) = (cos d + cos 0.1 d)/2; two cosines: a few eps.
    const double phi = (std::cos(d) + std::cos(0.1 * d)) / 2;
    CHECK(num(t.rows[i][2]) == doctest::Approx(phi).epsilon(1e-14));
    // Orthogonal G: ||G||_F^2 = n = 4; tr G^2 = tr G(2d) = n Phi(2d); rho^2 = 1/4.
    const double phi2 = (std::cos(2 * d) + std::cos(0.2 * d)) / 2;
    CHECK(num(t.rows[i][3]) == doctest::Approx(4 + 0.25 * 4 * phi2).epsilon(1e-14));
    CHECK(num(cell(t, i, "sine_residual")) == doctest::Approx((std::sin(d) + std::sin(0.1 * d)) / 2).epsilon(1e-14));
    CHECK(cell(t, i, "expected_kernel").empty());
    CHECK(cell(t, i, "frequency_variance").empty());
  }
  CHECK(num(t.rows[1][2]) == doctest::Approx(-0.017328).epsilon(1e-4));  // the number a reader can check by hand
}

TEST_CASE("kernel --encoding rope keeps today's information: kernel, sine residual and continuum (spec values)") {
  const auto r = run_ropekit("kernel --encoding rope:dim=128,base=1e4");  // default lags 0,1,10,100,1000
  REQUIRE(r.exit_code == 0);
  const auto t = csv(r.out);
  REQUIRE(t.rows.size() == 5);
  CHECK(cell(t, 0, "kernel") == "1");
  CHECK(cell(t, 0, "content_variance") == "256");  // n + rho^2 n with rho = 1
  CHECK(std::abs(num(cell(t, 3, "kernel")) - 0.477) <= 5e-4);  // rf-rope.md section 3, three decimals
  CHECK(std::abs(num(cell(t, 3, "continuum")) - 0.437) <= 5e-4);
  CHECK(cell(t, 4, "lag") == "1000");
}

TEST_CASE("kernel --encoding: several families side by side, repeated --encoding is the same, rf-rope columns") {
  const std::string rf = "'rf-rope:spectrum=gaussian(sigma=1),blocks=8,seed=3'";
  const auto a = run_ropekit("kernel --encoding rope:dim=8 alibi:slope=0.5,L=64 " + rf + " --lags 0,0.5,2");
  const auto b = run_ropekit("kernel --encoding rope:dim=8 --encoding alibi:slope=0.5,L=64 --encoding " + rf +
                             " --lags 0,0.5,2");
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  const auto t = csv(a.out);
  // The same columns as for rope alone: rf-rope fills the expected kernel and frequency variance, rope the sine
  // residual and continuum, alibi neither.
  CHECK(t.columns == kKernelColumns);
  REQUIRE(t.rows.size() == 9);
  for (std::size_t i = 0; i < 6; ++i) {  // rope and alibi rows: empty cells, not "nan"
    CHECK(t.rows[i][4].empty());
    CHECK(t.rows[i][5].empty());
    CHECK(cell(t, i, "continuum").empty() == (i >= 3));  // rope's rows have it, alibi's not
  }
  for (std::size_t i = 6; i < 9; ++i) CHECK(cell(t, i, "sine_residual").empty());
  // ALiBi: G = [[1, -m d], [0, 1]]: Phi = 1, ||G||_F^2 + tr G^2 = 2 + (m d)^2 + 2.
  CHECK(t.rows[4][0] == "alibi:slope=0.5,L=64");
  CHECK(num(t.rows[4][2]) == 1);
  CHECK(num(t.rows[4][3]) == doctest::Approx(4 + 0.25 * 0.25).epsilon(1e-15));
  for (std::size_t i = 6; i < 9; ++i) {
    const double d = num(t.rows[i][1]);
    CHECK(t.rows[i][0] == "rf-rope:spectrum=gaussian(sigma=1),blocks=8,seed=3,sampling=iid");
    CHECK(num(t.rows[i][4]) == doctest::Approx(std::exp(-d * d / 2)).epsilon(1e-15));  // Gaussian: e^{-d^2/2}
    // Prop 4 for iid draws, A_i = 1/D: Var[cos(w d)]/D = ((1 + Phi(2d))/2 - Phi(d)^2)/8.
    const double var = ((1 + std::exp(-2 * d * d)) / 2 - std::exp(-d * d)) / 8;
    CHECK(num(t.rows[i][5]) == doctest::Approx(var).epsilon(1e-13));
  }
}

TEST_CASE("kernel --encoding: k-D lags as text") {
  // nd takes 2-D lags, printed "1,0" like the spectrum path.
  const auto nd = run_ropekit("kernel --encoding nd:dim=8,axes=2,base=100 --lags '1,0;0,2'");
  REQUIRE(nd.exit_code == 0);
  const auto t = csv(nd.out);
  CHECK(t.rows.at(0).at(1) == "1,0");
  // Axial, 2 axes, n = 8: each axis has the frequencies 1, 0.1 (100^{-2j/4}) on its two planes; the kernel along
  // axis 0 at 1 is (cos 1 + cos 0.1 + 2)/4 (the other axis' planes do not rotate).
  CHECK(num(t.rows[0][2]) == doctest::Approx((std::cos(1) + std::cos(0.1) + 2) / 4).epsilon(1e-14));
}

TEST_CASE("frequencies: YaRN n = 128, B = 1e4, L0 = 4096, s = 16 against the spec's correction range [20, 46]") {
  const auto r = run_ropekit("frequencies --encoding 'rope:dim=128,base=1e4,scaling=yarn(factor=16,orig=4096)' --float32");
  REQUIRE(r.exit_code == 0);
  const auto t = csv(r.out);
  CHECK(t.columns == std::vector<std::string>{"i", "theta", "wavelength", "attention_factor", "theta_float32"});
  REQUIRE(t.rows.size() == 64);
  // The library's values, printed shortest round-trip: equal bit for bit.
  const ropekit::FrequencySchedule schedule{ropekit::Geometric{.dim = 128, .base = 1e4},
                                            ropekit::scaling::Yarn{.factor = 16, .orig = 4096}};
  const auto lib = ropekit::frequencies(schedule);
  const auto lib32 = ropekit::frequencies(schedule, std::nullopt, ropekit::Convention::huggingface, true);
  // The spec's public value (encodings.md section 3): raw 20.9445, 45.0269, truncated [20, 46]. d(r) solves
  // 2 pi / theta_i = L0 / r for the frequency index i (theta_i = B^{-2i/n}): the ramp runs over frequency indices
  // i = 0..63 (HF linear_ramp_factor(low, high, dim // 2)), not over dims, so frequencies i <= 20 keep theta_i,
  // i >= 46 are divided by s, and i = 33 is the midpoint of the ramp: (33 - 20)/26 = 1/2.
  const auto range = ropekit::yarn_correction_range(ropekit::scaling::Yarn{.factor = 16, .orig = 4096}, 128, 1e4);
  CHECK(range.low == 20);
  CHECK(range.high == 46);
  const double d_fast = 128 * std::log(4096 / (2 * std::numbers::pi * 32)) / (2 * std::log(1e4));
  const double d_slow = 128 * std::log(4096 / (2 * std::numbers::pi * 1)) / (2 * std::log(1e4));
  CHECK(std::abs(d_fast - 20.9445) < 5e-5);
  CHECK(std::abs(d_slow - 45.0269) < 5e-5);
  for (std::size_t i = 0; i < 64; ++i) {
    CAPTURE(i);
    const double theta = num(t.rows[i][1]);
    CHECK(theta == lib.theta(static_cast<Eigen::Index>(i), 0));
    CHECK(num(t.rows[i][4]) == lib32.theta(static_cast<Eigen::Index>(i), 0));
    // Re-derived here: B^{-2i/n} (HF: 1 / B^{2i/n}; a few ulps apart).
    const double plain = std::pow(1e4, -static_cast<double>(i) / 64);
    const double ramp = std::clamp((static_cast<double>(i) - 20) / 26, 0.0, 1.0);
    const double want = i <= 20 ? plain : i >= 46 ? plain / 16 : plain / 16 * ramp + plain * (1 - ramp);
    CHECK(theta == doctest::Approx(want).epsilon(4e-16 * 4));
    CHECK(num(t.rows[i][2]) == doctest::Approx(2 * std::numbers::pi / theta).epsilon(2e-16 * 2));
    CHECK(num(t.rows[i][3]) == doctest::Approx(0.1 * std::log(16) + 1).epsilon(1e-15));  // mscale(16)
    // float32: a float value, within a few float ulps of the float64 one.
    const double f32 = num(t.rows[i][4]);
    CHECK(static_cast<double>(static_cast<float>(f32)) == f32);
    CHECK(std::abs(f32 - theta) <= 8 * 0x1p-24 * theta);  // powf, a division and the blend: ~4 float roundings
  }
  CHECK(num(t.rows[33][1]) == doctest::Approx(std::pow(1e4, -33.0 / 64) * (0.5 / 16 + 0.5)).epsilon(1e-15));
}

TEST_CASE("frequencies: dynamic NTK needs --seq-len; with it the NTK base; longrope without it uses short factors") {
  const std::string dyn = "'rope:dim=8,base=1e4,scaling=dynamic(factor=4,orig=64)'";
  const auto none = run_ropekit("frequencies --encoding " + dyn);
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("--seq-len") != std::string::npos);
  CHECK(std::count(none.err.begin(), none.err.end(), '\n') == 1);
  const auto r = run_ropekit("frequencies --encoding " + dyn + " --seq-len 128");
  REQUIRE(r.exit_code == 0);
  const auto t = csv(r.out);
  // B' = B ((s T / L0) - (s - 1))^{n/(n-2)} = 1e4 * 5^{4/3}; theta_i = B'^{-2i/8}.
  const double base = 1e4 * std::pow(5.0, 8.0 / 6);
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(num(t.rows[i][1]) == doctest::Approx(std::pow(base, -2.0 * i / 8)).epsilon(1e-14));
  const std::string lr = "'rope:dim=4,base=100,scaling=longrope(short=[1,2],long=[4,8],orig=64,max=256)'";
  const auto s = csv(run_ropekit("frequencies --encoding " + lr).out);
  const auto l = csv(run_ropekit("frequencies --encoding " + lr + " --seq-len 65").out);
  CHECK(num(s.rows[1][1]) == doctest::Approx(0.1 / 2).epsilon(1e-15));  // short factor 2
  CHECK(num(l.rows[1][1]) == doctest::Approx(0.1 / 8).epsilon(1e-15));  // T > orig: long factor 8
  // a = sqrt(1 + ln s / ln L0), s = 256/64.
  CHECK(num(s.rows[0][3]) == doctest::Approx(std::sqrt(1 + std::log(4.0) / std::log(64.0))).epsilon(1e-15));
}

TEST_CASE("transformers' options: accepted with one note line each on stderr, exit 0 (they were refused)") {
  // yarn without factor: s = max / orig = 8 (transformers' max_position_embeddings / original_...), a = 0.1 ln 8 + 1;
  // beta_fast = 0 means 32. Before: "yarn.factor = (missing)" and "yarn.beta_fast = 0 (must be > beta_slow = 1)".
  const auto y = run_ropekit("frequencies --encoding 'rope:dim=8,base=1e4,scaling=yarn(orig=4096,max=32768,beta_fast=0)'");
  REQUIRE(y.exit_code == 0);
  CHECK(y.err == "ropekit frequencies: note: yarn.beta_fast = 0 means 32, as transformers reads it (beta_fast or 32)\n");
  CHECK(num(cell(csv(y.out), 0, "attention_factor")) == doctest::Approx(0.1 * std::log(8.0) + 1).epsilon(1e-15));
  // partial with dim * partial = 5: r = int(5) = 5, theta = 1, 1e4^(-2/5), 1e4^(-4/5) on 6 dims (before: refused,
  // "must be such that dim * partial is an even integer >= 2"); kernel keeps n = 10: tr G(0) = 10 at lag 0.
  const auto p = run_ropekit("frequencies --encoding rope:dim=10,base=1e4,partial=0.5");
  REQUIRE(p.exit_code == 0);
  const auto t = csv(p.out);
  REQUIRE(t.rows.size() == 3);
  CHECK(num(cell(t, 1, "theta")) == doctest::Approx(std::pow(1e4, -2.0 / 5)).epsilon(1e-15));
  CHECK(num(cell(t, 2, "theta")) == doctest::Approx(std::pow(1e4, -4.0 / 5)).epsilon(1e-15));
  CHECK(p.err.find("ropekit frequencies: note: partial = 0.5: dim * partial = 5 is not an even integer") == 0);
  CHECK(std::count(p.err.begin(), p.err.end(), '\n') == 1);
  const auto k = run_ropekit("kernel --encoding rope:dim=10,base=1e4,partial=0.5 'rope:scaling=linear(factor=0.5)' --lags 0");
  REQUIRE(k.exit_code == 0);
  CHECK(num(cell(csv(k.out), 0, "content_variance")) == doctest::Approx(2 * 10).epsilon(1e-15));  // ||I||_F^2 + tr I, rho = 1
  CHECK(k.err.find("ropekit kernel: note: partial = 0.5") != std::string::npos);
  CHECK(k.err.find("ropekit kernel: note: linear.factor = 0.5 is below 1") != std::string::npos);
  CHECK(std::count(k.err.begin(), k.err.end(), '\n') == 2);
  // Nothing to note: stderr stays empty.
  CHECK(run_ropekit("frequencies --encoding 'rope:dim=8,scaling=yarn(factor=8,orig=4096,max=32768)'").err.empty());
}

TEST_CASE("frequencies: direct sums list each rotary part; nd prints one theta column per axis") {
  const auto r = run_ropekit("frequencies --encoding 'direct-sum:[rope(dim=4,base=100),alibi,damped(dim=2)]'");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "part,i,theta,wavelength,attention_factor\n"
                 "0,0,1,6.283185307179586,1\n"
                 "0,1,0.1,62.83185307179586,1\n"
                 "1,0,1,6.283185307179586,1\n");
  const auto nd = csv(run_ropekit("frequencies --encoding nd:dim=8,axes=2,base=100 --format csv").out);
  CHECK(nd.columns == std::vector<std::string>{"i", "theta_0", "theta_1", "wavelength", "attention_factor"});
  REQUIRE(nd.rows.size() == 4);
  CHECK(nd.rows[3][1] == "0");
  CHECK(num(nd.rows[3][2]) == doctest::Approx(0.1).epsilon(1e-15));
}

TEST_CASE("features --encoding: the --method shape, xPos columns written out, alias = family value") {
  const auto r = run_ropekit("features --encoding alibi:L=1024 --lags 0,512,1024");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == run_ropekit("features --method alibi --lags 0,512,1024 --train-context 1024").out);
  CHECK(r.out == "lag,1,x\n0,1,0\n512,1,0.5\n1024,1,1\n");
  const auto x = csv(run_ropekit("features --encoding xpos:dim=4,base=100,scale_base=512 --lags 0,3,700").out);
  CHECK(x.columns == std::vector<std::string>{"lag", "1", "zeta0^(d/S)*cos0", "zeta1^(d/S)*cos1", "zeta0^(d/S)*sin0",
                                              "zeta1^(d/S)*sin1"});
  for (std::size_t i = 0; i < 3; ++i) {
    const double d = num(x.rows[i][0]);
    // zeta_i = (2i + 0.4 n)/(1.4 n), n = 4: 1.6/5.6 and 3.6/5.6; theta = 1, 0.1.
    const double z0 = std::pow(1.6 / 5.6, d / 512), z1 = std::pow(3.6 / 5.6, d / 512);
    CHECK(num(x.rows[i][2]) == doctest::Approx(z0 * std::cos(d)).epsilon(1e-13));
    CHECK(num(x.rows[i][5]) == doctest::Approx(z1 * std::sin(0.1 * d)).epsilon(1e-13));
  }
  // A reference name and its family value print the same columns.
  CHECK(run_ropekit("features --encoding jordan_rope --lags 0,5,77").out ==
        run_ropekit("features --encoding jordan:m=2,gamma=1e-4,tau=bounded,L=1024,dim=128,base=1e4 --lags 0,5,77").out);
}

TEST_CASE("list encodings has every family") {
  const auto r = run_ropekit("list encodings --format csv");
  REQUIRE(r.exit_code == 0);
  const auto t = csv(r.out);
  CHECK(t.columns == std::vector<std::string>{"spelling", "aliases", "operator", "features"});
  std::set<std::string> families;
  for (const auto& row : t.rows) families.insert(row[0].substr(0, row[0].find(':')));
  for (const char* f : {"rope", "rope-freqs", "rope-matched", "xpos", "rf-rope", "damped", "jordan", "jordan-scaled",
                        "real-jordan", "alibi", "poly", "nope", "direct-sum", "nd", "sinusoidal"}) {
    CAPTURE(f);
    CHECK(families.count(f) == 1);
  }
}

TEST_CASE("check: group law exact for rope, broken for bounded Jordan; decay bound (D + 1)/2 at 0; exit 0") {
  const auto r = run_ropekit("check --encoding rope:dim=128 jordan:tau=bounded sinusoidal:dim=16 "
                             "'rope:dim=64,scaling=yarn(factor=8,orig=2048)'");
  REQUIRE(r.exit_code == 0);  // check reports; it does not fail on what it finds
  const auto t = csv(r.out);
  CHECK(t.columns == std::vector<std::string>{"encoding", "quantity", "lag", "value"});
  const auto rope = quantity_rows(t, "rope:dim=128,", "group_law_defect");
  REQUIRE(rope.size() == 1);
  CHECK(num(rope[0][3]) <= 1e-12);
  const auto jordan = quantity_rows(t, "jordan:", "group_law_defect");
  REQUIRE(jordan.size() == 1);
  CHECK(num(jordan[0][3]) >= 1e-6);
  CHECK(quantity_rows(t, "jordan:", "is_exact")[0][3] == "false");
  CHECK(quantity_rows(t, "rope:dim=128,", "is_exact")[0][3] == "true");
  // Sinusoidal is absolute: a relativity defect, no group-law row.
  CHECK(quantity_rows(t, "sinusoidal:", "group_law_defect").empty());
  REQUIRE(quantity_rows(t, "sinusoidal:", "relativity_defect").size() == 1);
  CHECK(num(quantity_rows(t, "sinusoidal:", "relativity_defect")[0][3]) > 0.01);
  // RoFormer's bound at the default window; at 0 every S_j = j: (1/64) sum_{j=1}^{64} j = 32.5.
  const auto decay = quantity_rows(t, "rope:dim=128,", "long_term_decay_bound");
  REQUIRE(decay.size() == 8);  // 0,1,2,5,10,50,100,1000
  CHECK(decay[0][2] == "0");
  CHECK(num(decay[0][3]) == 32.5);
  CHECK(num(decay[7][3]) < num(decay[1][3]));
  // Scaled encodings add 2 orig to the window.
  const auto yarn = quantity_rows(t, "rope:dim=64,base=10000,F=32,scaling=yarn", "long_term_decay_bound");
  REQUIRE(yarn.size() == 9);
  CHECK(yarn.back()[2] == "4096");
  // --window replaces the default window.
  const auto w = csv(run_ropekit("check --encoding rope:dim=8 --window 0,3").out);
  CHECK(quantity_rows(w, "rope:", "long_term_decay_bound").size() == 2);
}

TEST_CASE("bad input to the encoding commands: exit 2, one error line naming the option or key, no --out file") {
  ScratchDir dir("enc-bad");
  struct Bad {
    std::string args, mentions;
  };
  const std::vector<Bad> bad = {
      {"kernel --encoding foo", "encoding family = 'foo' (must be one of rope, "},
      {"kernel --encoding rope:dim=127", "dim = 127"},
      {"kernel --encoding rope --lags 1,nan", "--lags = 'nan'"},
      {"kernel --encoding rope --rho 2", "--rho = 2"},
      {"kernel --encoding rope --rho nan", "--rho = nan"},
      {"kernel --encoding nd:dim=8", "--lags = (missing)"},
      {"kernel --encoding rope --seq-len -1", "--seq-len = -1"},
      {"kernel --encoding rope nd:dim=8 --lags 1", "--encoding = 'nd:dim=8' (2-D lags)"},
      {"kernel --encoding sinusoidal", "--encoding = 'sinusoidal'"},
      {"kernel --encoding 'jordan:tau=raw,gamma=1' --lags -1000", "--lags = -1000"},
      {"kernel --encoding rope --plot " + dir.file("p.svg") + " --lags '1,0;0,1'", "--lags"},
      {"kernel --spectrum gaussian --rho 0.5", "--rho = 0.5"},
      {"kernel --encoding rope:dim=16777216 --lags 0:1048576", "--lags = 1048576 lags (must be at most"},
      {"frequencies --encoding foo", "encoding family = 'foo' (must be one of rope, "},
      {"frequencies --encoding rope:dim=7", "dim = 7"},
      {"frequencies --encoding alibi", "--encoding = 'alibi'"},
      {"frequencies --encoding rope --seq-len -1", "--seq-len = -1"},
      {"frequencies --encoding rope --convention torch", "--convention = 'torch'"},
      {"frequencies --encoding 'rope:scaling=dynamic(factor=2,orig=4096)'", "--seq-len"},
      {"frequencies --encoding 'rope:scaling=yarn(factor=2,orig=4096,truncate=false)' --convention ggml", "yarn.truncate"},
      {"features --encoding rope:dim=9", "dim = 9"},
      {"features --encoding rope --lags 0,-1", "--lags = -1"},
      {"features --encoding rope --lags nan", "--lags = 'nan'"},
      {"features --encoding nd:dim=8", "--lags = (missing)"},
      {"features --encoding rope --num-freqs 4", "--num-freqs = given with --encoding"},
      {"features --encoding rope --method rope", "--method = 'rope' (must be absent with --encoding"},
      {"features --encoding sinusoidal", "--encoding = 'sinusoidal'"},
      {"check --encoding foo", "encoding family = 'foo' (must be one of rope, "},
      {"check --encoding rope:dim=6,base=-1", "base = -1"},
      {"check --encoding rope --window 1,nan", "--window = 'nan'"},
      {"check --encoding rope --seq-len -1", "--seq-len = -1"},
      {"check --encoding 'jordan:tau=raw,gamma=1' --window 1e6", "--window = 1e6"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.args);
    const std::string out = dir.file("out.csv");
    const auto r = run_ropekit(b.args + " --out " + out);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(r.err.find(b.mentions) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
    CHECK_FALSE(std::filesystem::exists(out));
    CHECK_FALSE(std::filesystem::exists(dir.file("p.svg")));
  }
}

TEST_CASE("jordan eta from the command line: features and kernel run, the report spells eta=0.003 after L") {
  const std::string enc = "'jordan:dim=8,base=100,m=2,L=1024,eta=0.003'";
  const auto f = run_ropekit("features --encoding " + enc + " --lags 0:4");
  REQUIRE(f.exit_code == 0);
  CHECK(f.err.empty());
  const auto t = csv(f.out);
  REQUIRE(t.rows.size() == 4);
  REQUIRE(t.columns.size() == 1 + 1 + 2 * 2 * 4);  // lag, then 1 + 2 m F
  for (std::size_t i = 0; i < 4; ++i) {
    const double d = num(t.rows[i][0]);
    CAPTURE(d);
    // theta_0 = 1; bounded that = eta d/(1 + d/L) (Jordan-RoPE), E = e^{-1e-4 d} (the default gamma): a few roundings.
    const double that = 0.003 * d / (1 + d / 1024), envelope = that * std::exp(-1e-4 * d);
    CHECK(std::abs(num(cell(t, i, "that*E*cos0")) - envelope * std::cos(d)) <= 1e-15);
    CHECK(std::abs(num(cell(t, i, "that*E*sin0")) - envelope * std::sin(d)) <= 1e-15);
  }
  const auto k = run_ropekit("kernel --encoding " + enc + " --lags 0:4");
  REQUIRE(k.exit_code == 0);
  const auto kt = csv(k.out);
  REQUIRE(kt.rows.size() == 4);
  CHECK(cell(kt, 0, "encoding") == "jordan:m=2,gamma=0.0001,tau=bounded,L=1024,eta=0.003,dim=8,base=100,F=4");
  CHECK(cell(kt, 0, "kernel") == "1");
  // Without eta, nothing new is printed.
  const auto plain = csv(run_ropekit("kernel --encoding 'jordan:dim=8,base=100,m=2,L=1024' --lags 0").out);
  CHECK(cell(plain, 0, "encoding") == "jordan:m=2,gamma=0.0001,tau=bounded,L=1024,dim=8,base=100,F=4");
  ropekit::test::check_rejected("kernel --encoding 'jordan:dim=8,eta=0'", "eta = 0 (must be finite and > 0");
}

TEST_CASE("kernel: a lag where G overflows is refused before any row reaches stdout") {
  // alibi's content variance grows as (slope d)^2: past d = 515685 it leaves float64. Rows go out in blocks of
  // 2^18, so 458,753 lines had been printed before the error (issue 20 item 13).
  const auto r = run_ropekit("kernel --encoding alibi:slope=2.6e148 --lags 0:600000");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("ropekit kernel: --lags = 599999 (must be lags at which G is finite for 'alibi:slope=2.6e148'") !=
        std::string::npos);
}
