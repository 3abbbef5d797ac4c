// The rope options transformers 5.17 accepts that ropekit spells as it does (issue 20 item 8): yarn without factor
// (s = max / orig), longrope's explicit factor, partial with int(dim * partial), transformers' fallbacks
// (beta_fast = 0 means 32, beta_slow = 0 means 1, a zero mscale is ignored) and the values it only warns about
// (factor < 1, beta_fast <= beta_slow, llama3 high <= low), accepted with a note. Expected values: transformers'
// own buffers in tests/data/transformers/inv-freq.csv (captured on a real machine, README there), or values
// derived by hand from modeling_rope_utils.py with python3's float arithmetic, quoted in the comments.

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <numbers>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "support.hpp"

using namespace ropekit;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// One module buffer of inv-freq.csv: the float32 values and transformers' attention scaling (a Python float).
struct HfBuffer {
  std::vector<float> inv_freq;
  double attention_scaling = 0;
};

// The CPU buffer of `case_name` at seq_len `seq_len` ("" for the buffer after construction).
HfBuffer hf_buffer(const std::string& case_name, const std::string& seq_len = "") {
  std::ifstream in(std::string(ROPEKIT_SOURCE_DIR) + "/tests/data/transformers/inv-freq.csv");
  REQUIRE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (cells.size() != 8 || cells[0] != case_name || cells[2] != "cpu" || cells[3] != "inv_freq" || cells[4] != seq_len)
      continue;
    HfBuffer b;
    b.attention_scaling = std::stod(cells[5]);
    std::stringstream bits(cells[7]);
    for (std::string hex; bits >> hex;) b.inv_freq.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16))));
    REQUIRE(b.inv_freq.size() == std::stoul(cells[6]));
    return b;
  }
  FAIL("no cpu inv_freq row for " << case_name);
  return {};
}

FrequencyTable table(const std::string& spelling, bool float32 = false, std::optional<double> T = {}) {
  return frequencies(parse_encoding(spelling), T, Convention::huggingface, float32);
}

// ropekit's float32 emulation against transformers' CPU buffer to 2 float ulps: the same float steps, but glibc's
// correctly rounded powf against torch's vectorised CPU pow, which differs by 1 ulp on some entries (README there;
// base 150000 at i = 6 and 10), and YaRN's blend carries that ulp through one more rounding. What these tests
// tell apart (the factor, the correction range, the active list) moves entries by far more. The attention factor
// against transformers' Python float to 2 ulps (log and sqrt of libm, one or two roundings in either route).
void check_against(const std::string& spelling, const HfBuffer& hf) {
  CAPTURE(spelling);
  const FrequencyTable t = table(spelling, true);
  REQUIRE(t.theta.rows() == static_cast<Eigen::Index>(hf.inv_freq.size()));
  for (Eigen::Index i = 0; i < t.theta.rows(); ++i) {
    CAPTURE(i);
    const float got = static_cast<float>(t.theta(i)), want = hf.inv_freq[static_cast<std::size_t>(i)];
    CHECK(std::abs(got - want) <= 2 * (std::nextafter(want, 2 * want) - want));
  }
  CHECK(std::abs(t.attention_factor - hf.attention_scaling) <= 2 * kEps * hf.attention_scaling);
}

std::vector<std::string> notes_of(const std::string& spelling) { return encoding_notes(parse_encoding(spelling)); }

bool has_note(const std::vector<std::string>& notes, const std::string& fragment) {
  for (const auto& n : notes)
    if (n.find(fragment) != std::string::npos) return true;
  return false;
}

void check_round_trip(const std::string& spelling) {
  CAPTURE(spelling);
  const Encoding e = parse_encoding(spelling);
  CHECK(spelling == ropekit::spelling(e));
  CHECK(ropekit::spelling(parse_encoding(ropekit::spelling(e))) == spelling);
}

}  // namespace

TEST_CASE("yarn without factor: s = max / orig, transformers' buffers where its explicit factor equals max / orig") {
  // transformers sets factor = max_position_embeddings / original_max_position_embeddings when factor is None; in
  // these captured configs the explicit factor equals that ratio exactly (32768 / 4096 = 8, 163840 / 4096 = 40,
  // 131072 / 4096 = 32), so their buffers are what a config without factor computes.
  check_against("rope:dim=128,base=1e4,scaling=yarn(orig=4096,max=32768,beta_fast=16,beta_slow=2,attention_factor=1.25)",
                hf_buffer("yarn_attention_factor"));
  check_against("rope:dim=64,base=1e4,scaling=yarn(orig=4096,max=163840,mscale=1,mscale_all_dim=1)",
                hf_buffer("deepseek_v3_yarn"));
  check_against("rope:dim=64,base=150000,scaling=yarn(orig=4096,max=131072)", hf_buffer("yarn_gptoss_trunc_llama"));
  // A ratio no captured config has: python3, 0.1 * math.log(10000 / 4096) + 1 = 1.089257420525684 (s = 2.44140625).
  const FrequencyTable t = table("rope:dim=128,base=1e4,scaling=yarn(orig=4096,max=10000)");
  CHECK(std::abs(t.attention_factor - 1.089257420525684) <= 2 * kEps);
  CHECK(t.theta == table("rope:dim=128,base=1e4,scaling=yarn(factor=2.44140625,orig=4096)").theta);
  CHECK(notes_of("rope:dim=128,base=1e4,scaling=yarn(orig=4096,max=10000)").empty());
  // Both given: factor is used (transformers warns when they disagree); agreeing keys give no note.
  CHECK(table("rope:dim=128,base=1e4,scaling=yarn(factor=4,orig=4096,max=32768)").attention_factor ==
        table("rope:dim=128,base=1e4,scaling=yarn(factor=4,orig=4096)").attention_factor);
  CHECK(has_note(notes_of("rope:dim=128,base=1e4,scaling=yarn(factor=4,orig=4096,max=32768)"),
                 "yarn.max = 32768 gives max / orig = 8, not factor = 4: factor is used"));
  CHECK(notes_of("rope:dim=128,base=1e4,scaling=yarn(factor=8,orig=4096,max=32768)").empty());
  // Neither: refused naming both.
  CHECK_THROWS_WITH_AS(parse_encoding("rope:scaling=yarn(orig=4096)"),
                       doctest::Contains("yarn.factor = (missing) (must be given: yarn needs factor or max)"), InputError);
  check_round_trip("rope:dim=128,base=10000,F=64,scaling=yarn(orig=4096,max=32768,beta_fast=32,beta_slow=1,truncate=true)");
  check_round_trip("rope:dim=128,base=10000,F=64,scaling=yarn(factor=4,orig=4096,max=32768,beta_fast=0,beta_slow=1,"
                   "truncate=true,mscale=0)");
  // fit-params tunes the factor: made explicit (s = max / orig) with max dropped, the same frequencies.
  Scaling s = std::get<enc::Rope>(parse_encoding("rope:scaling=yarn(orig=4096,max=32768)").value).freqs.scaling;
  REQUIRE(tunable_factor(s) != nullptr);
  CHECK(*tunable_factor(s) == 8);
  CHECK(spelling(s) == "yarn(factor=8,orig=4096,beta_fast=32,beta_slow=1,truncate=true)");
}

TEST_CASE("yarn fallbacks: beta_fast = 0 means 32, beta_slow = 0 means 1, a zero mscale is ignored (transformers)") {
  // transformers: beta_fast = rope_parameters.get("beta_fast") or 32, beta_slow = ... or 1; its captured buffer was
  // computed with beta_fast = 32, beta_slow = 1.
  check_against("rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096,beta_fast=0,beta_slow=0)",
                hf_buffer("yarn_gptoss_trunc_llama"));
  // `if mscale and mscale_all_dim`: mscale_all_dim = 0 drops the ratio, a = 0.1 ln 8 + 1 (captured: 1.2079441541679836).
  check_against("rope:dim=128,base=1e4,scaling=yarn(factor=8,orig=4096,mscale=0.707,mscale_all_dim=0)",
                hf_buffer("yarn_mscale"));
  check_against("rope:dim=128,base=1e4,scaling=yarn(orig=4096,max=32768,mscale=0.707,mscale_all_dim=0)",
                hf_buffer("yarn_mscale"));
  const auto notes = notes_of("rope:scaling=yarn(factor=32,orig=4096,beta_fast=0,beta_slow=0,mscale=0)");
  CHECK(has_note(notes, "yarn.beta_fast = 0 means 32"));
  CHECK(has_note(notes, "yarn.beta_slow = 0 means 1"));
  CHECK(has_note(notes, "yarn.mscale = 0 is ignored"));
  CHECK(notes.size() == 3);
  // Negative values stay refused (log of a negative rotation count; a negative mscale).
  CHECK_THROWS_WITH_AS(parse_encoding("rope:scaling=yarn(factor=2,orig=4096,beta_fast=-1)"),
                       doctest::Contains("yarn.beta_fast = -1 (must be finite and >= 0)"), InputError);
  CHECK_THROWS_WITH_AS(parse_encoding("rope:scaling=yarn(factor=2,orig=4096,mscale=-0.5)"),
                       doctest::Contains("yarn.mscale = -0.5 (must be finite and >= 0)"), InputError);
  // Under ggml a zero mscale is ignored too (a non-zero one is refused there).
  CHECK(frequencies(parse_encoding("rope:dim=64,scaling=yarn(factor=4,orig=4096,mscale=0)"), {}, Convention::ggml, false).attention_factor ==
        frequencies(parse_encoding("rope:dim=64,scaling=yarn(factor=4,orig=4096)"), {}, Convention::ggml, false).attention_factor);
}

TEST_CASE("longrope's explicit factor sets the attention factor over max / orig (transformers)") {
  const HfBuffer hf = hf_buffer("longrope_synthetic_96");
  std::string short_list = "[", long_list = "[";
  for (int i = 0; i < 48; ++i) {  // the captured lists: short 1 + 0.01 i, long 1 + 0.5 i
    short_list += (i ? "," : "") + format_number(1 + 0.01 * i);
    long_list += (i ? "," : "") + format_number(1 + 0.5 * i);
  }
  const std::string lists = "short=" + short_list + "],long=" + long_list + "]";
  // Without factor: s = max / orig = 32, transformers' captured a = 1.1902380714238083.
  check_against("rope:dim=96,base=1e4,scaling=longrope(" + lists + ",orig=4096,max=131072)", hf);
  // With factor = 8 the frequencies are transformers' (the factor is not in them), and a = sqrt(1 + ln 8 / ln 4096):
  // python3, math.sqrt(1 + math.log(8) / math.log(4096)) = 1.118033988749895, max or no max.
  for (const char* keys : {",factor=8,orig=4096", ",factor=8,orig=4096,max=131072"}) {
    const std::string spelling = "rope:dim=96,base=1e4,scaling=longrope(" + lists + keys + ")";
    CAPTURE(spelling);
    check_against(spelling, HfBuffer{hf.inv_freq, 1.118033988749895});
  }
  CHECK(has_note(notes_of("rope:dim=96,base=1e4,scaling=longrope(" + lists + ",factor=8,orig=4096,max=131072)"),
                 "longrope.max = 131072 gives max / orig = 32, not factor = 8: factor sets the attention factor"));
  CHECK(notes_of("rope:dim=96,base=1e4,scaling=longrope(" + lists + ",factor=32,orig=4096,max=131072)").empty());
  // factor <= 1: a = 1 (transformers' `if factor <= 1.0`), below 1 with a note.
  CHECK(table("rope:dim=8,scaling=longrope(short=[1,1,1,1],long=[1,1,1,1],factor=1,orig=4096)").attention_factor == 1);
  CHECK(table("rope:dim=8,scaling=longrope(short=[1,1,1,1],long=[1,1,1,1],factor=0.5,orig=4096)").attention_factor == 1);
  CHECK(has_note(notes_of("rope:dim=8,scaling=longrope(short=[1,1,1,1],long=[1,1,1,1],factor=0.5,orig=4096)"),
                 "longrope.factor = 0.5 is below 1"));
  check_round_trip("rope:dim=8,base=10000,F=4,scaling=longrope(short=[1,1,1,1],long=[1,2,3,4],factor=8,orig=4096,max=65536)");
}

TEST_CASE("partial: r = int(dim * partial) as transformers, ceil(r/2) frequencies base^(-2i/r) rotating 2 ceil(r/2) dims") {
  // dim 64, partial 0.3: transformers' dim = int(19.2) = 19, inv_freq = 1 / 1e4 ** (arange(0, 19, 2) / 19); python3,
  // [1.0 / 10000 ** (i / 19) for i in range(0, 19, 2)]. Tolerance: pow(B, -2i/r) against 1 / B ** (2i/r): a few
  // roundings, each magnified at most (2i/r) ln B < 9.3 times: 16 eps.
  const std::vector<double> hf19 = {1.0,
                                    0.379269019073225,
                                    0.14384498882876628,
                                    0.0545559478116852,
                                    0.0206913808111479,
                                    0.007847599703514615,
                                    0.0029763514416313195,
                                    0.0011288378916846893,
                                    0.00042813323987193956,
                                    0.00016237767391887227};
  const FrequencyTable t = table("rope:dim=64,base=1e4,partial=0.3");
  REQUIRE(t.theta.rows() == 10);
  for (int i = 0; i < 10; ++i) {
    CAPTURE(i);
    CHECK(std::abs(t.theta(i) - hf19[static_cast<std::size_t>(i)]) <= 16 * kEps * hf19[static_cast<std::size_t>(i)]);
  }
  CHECK(t.identity_dims == 64 - 20);  // HF rotates cat(freqs, freqs): 20 dims, the other 44 pass through
  // dim 10, partial 0.5: r = 5 (odd), 3 frequencies 1, 1e4^(-2/5), 1e4^(-4/5) (python3: 0.025118864315095794,
  // 0.000630957344480193) on 6 dims, 4 unrotated; the operator keeps n = 10 and G(0) = I.
  const Encoding e = parse_encoding("rope:dim=10,base=1e4,partial=0.5");
  const FrequencyTable five = frequencies(e, {}, Convention::huggingface, false);
  REQUIRE(five.theta.rows() == 3);
  CHECK(std::abs(five.theta(1) - 0.025118864315095794) <= 16 * kEps * 0.025118864315095794);
  CHECK(std::abs(five.theta(2) - 0.000630957344480193) <= 16 * kEps * 0.000630957344480193);
  CHECK(five.identity_dims == 4);
  CHECK(encoding_size(e).n == 10);
  const double zero = 0;
  const Eigen::MatrixXd G0 = relative_operator(e, std::span<const double>(&zero, 1));
  CHECK(G0.rows() == 10);
  CHECK(G0.isIdentity(0));
  CHECK(spelling(e) == "rope:dim=10,base=10000,partial=0.5,F=3");
  check_round_trip("rope:dim=64,base=10000,partial=0.3,F=10");
  CHECK(has_note(notes_of("rope:dim=64,base=1e4,partial=0.3"),
                 "partial = 0.3: dim * partial = 19.2 is not an even integer; as transformers, r = int(dim * partial) = "
                 "19 gives 10 frequencies base^(-2i/19) rotating 20 dims, 44 unrotated"));
  CHECK(notes_of("rope:dim=64,base=1e4,partial=0.25").empty());
  // Even truncations agree with an exact product: int(64 * 0.26) = int(16.64) = 16, as partial = 0.25.
  CHECK(table("rope:dim=64,base=1e4,partial=0.26").theta == table("rope:dim=64,base=1e4,partial=0.25").theta);
  // int(dim * partial) = 0 has no frequency: refused; yarn's ramp needs an even r (torch refuses the odd product).
  CHECK_THROWS_WITH_AS(parse_encoding("rope:dim=64,partial=0.01"),
                       doctest::Contains("partial = 0.01 (must be such that int(dim * partial) >= 1 (dim * partial = 0.64))"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_encoding("rope:dim=64,partial=0.3,scaling=yarn(factor=4,orig=4096)"),
                       doctest::Contains("partial = 0.3 (must be such that int(dim * partial) is even with scaling yarn"),
                       InputError);
}

TEST_CASE("values transformers only warns about are accepted with a note: factor < 1, beta order, llama3 bands") {
  // linear: inv_freq /= factor (transformers), so factor 0.5 doubles every frequency exactly.
  const FrequencyTable lin = table("rope:dim=64,base=1e4,scaling=linear(factor=0.5)");
  CHECK(lin.theta == (2 * lin.unscaled).eval());
  for (const char* scheme : {"linear(factor=0.5)", "ntk(factor=0.5)", "dynamic(factor=0.5,orig=4096)",
                             "yarn(factor=0.5,orig=4096)", "llama3(factor=0.5,orig=8192)"}) {
    CAPTURE(scheme);
    const auto notes = notes_of(std::string("rope:dim=64,base=1e4,scaling=") + scheme);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("factor = 0.5 is below 1: accepted as transformers does") != std::string::npos);
  }
  // yarn at s = 0.5: get_mscale(s) = 1 for s <= 1.
  CHECK(table("rope:dim=64,base=1e4,scaling=yarn(factor=0.5,orig=4096)").attention_factor == 1);
  // Zero and negative factors are still refused.
  CHECK_THROWS_WITH_AS(parse_encoding("rope:scaling=linear(factor=0)"),
                       doctest::Contains("linear.factor = 0 (must be finite and > 0)"), InputError);

  // yarn with beta_fast = 1 < beta_slow = 32 (n = 128, B = 1e4, L0 = 4096, s = 16): transformers' ramp runs from
  // low = floor(d(1)) = 45 down to high = ceil(d(32)) = 21. python3, step by step as _compute_yarn_parameters in
  // float64: theta'_0 = 0.0625, theta'_10 = 0.014821085660385347, theta'_30 = 0.005521612180051264,
  // theta'_45 = 0.0015399265260594918, theta'_63 = 0.00011547819846894582. Tolerance: as the partial case above.
  const FrequencyTable back = table("rope:dim=128,base=1e4,scaling=yarn(factor=16,orig=4096,beta_fast=1,beta_slow=32)");
  for (const auto& [i, want] : {std::pair{0, 0.0625}, std::pair{10, 0.014821085660385347},
                                std::pair{30, 0.005521612180051264}, std::pair{45, 0.0015399265260594918},
                                std::pair{63, 0.00011547819846894582}}) {
    CAPTURE(i);
    CHECK(std::abs(back.theta(i) - want) <= 16 * kEps * want);
  }
  CHECK(has_note(notes_of("rope:scaling=yarn(factor=16,orig=4096,beta_fast=1,beta_slow=32)"),
                 "yarn.beta_fast = 1 is not above beta_slow = 32: accepted as transformers does"));
  CHECK(has_note(notes_of("rope:scaling=yarn(factor=16,orig=4096,beta_fast=1)"), "yarn.beta_fast = 1 is not above beta_slow = 1"));

  // llama3 high = 1 < low = 4 (n = 128, B = 5e5, orig 8192): no blend band; wavelengths above orig/low = 2048 are
  // divided by 8, the rest kept (python3 over transformers' torch.where: 35 divided, 29 kept).
  const FrequencyTable ll = table("rope:dim=128,base=5e5,scaling=llama3(factor=8,low=4,high=1,orig=8192)");
  int kept = 0, divided = 0;
  for (int i = 0; i < 64; ++i) {
    const double wavelength = 2 * std::numbers::pi / ll.unscaled(i);
    if (wavelength > 2048) {
      ++divided;
      CHECK(ll.theta(i) == ll.unscaled(i) / 8);
    } else {
      ++kept;
      CHECK(ll.theta(i) == ll.unscaled(i));
    }
  }
  CHECK(divided == 35);
  CHECK(kept == 29);
  CHECK(has_note(notes_of("rope:dim=128,base=5e5,scaling=llama3(factor=8,low=4,high=1,orig=8192)"),
                 "llama3.high = 1 is not above low = 4: accepted as transformers does"));
  // high = low with a wavelength of exactly orig/low: transformers' smooth factor is 0/0 there; refused.
  const double exact = 2 * std::numbers::pi / 8192;  // 2 pi / exact = 8192 exactly (python3 agrees)
  CHECK_THROWS_WITH_AS(
      frequencies(FrequencySchedule{ExplicitFrequencies{{exact}, ""}, scaling::Llama3{.factor = 8, .low = 1, .high = 1, .orig = 8192}}),
      doctest::Contains("llama3.high = 1 (must be != low = 1 for a frequency whose wavelength is orig/low = 8192"),
      InputError);
  check_round_trip("rope:dim=128,base=500000,F=64,scaling=llama3(factor=0.5,orig=8192,low=4,high=1)");
}
