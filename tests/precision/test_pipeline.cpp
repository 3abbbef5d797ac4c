// Pipelines (precision/pipeline.hpp): the public numbers of spec precision.md section 3 to their printed digits, and
// the tables transformers and PyTorch held (tests/data/transformers/cos-sin-tables.csv, captured on a GPU machine's
// CPU and GPU) bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ropekit/models/hf_config.hpp"
#include "ropekit/precision/pipeline.hpp"

using namespace ropekit;

namespace {

const std::string kData = std::string(ROPEKIT_SOURCE_DIR) + "/tests/data/transformers/";

PrecisionPlan plan(const std::string& spelling, Pipeline p = {}) {
  return plan_precision("ropekit precision", parse_encoding(spelling), p);
}

// |x - printed| within half a unit of the printed value's last significant digit (3 digits).
void check_printed(double x, double printed, int digits = 3) {
  CAPTURE(x);
  CAPTURE(printed);
  const double unit = std::pow(10.0, std::floor(std::log10(std::abs(printed))) - (digits - 1));
  CHECK(std::abs(x - printed) <= 0.5 * unit * (1 + 1e-9));
}

// inv-freq.csv's buffers at construction ("case device" -> float32 values widened).
const std::map<std::string, std::vector<double>>& inv_freq_buffers() {
  static const auto m = [] {
    std::map<std::string, std::vector<double>> out;
    std::ifstream f(kData + "inv-freq.csv");
    std::string line;
    std::getline(f, line);  // case,class,device,buffer,seq_len,attention_scaling,n,float32_bits
    while (std::getline(f, line)) {
      std::stringstream row(line);
      std::vector<std::string> c;
      for (std::string cell; std::getline(row, cell, ',');) c.push_back(cell);
      if (c.size() < 8 || !c[4].empty() || c[3] != "inv_freq") continue;
      std::vector<double> v;
      std::stringstream bits(c[7]);
      for (std::string h; bits >> h;) v.push_back(from_bits(Dtype::fp32, static_cast<std::uint32_t>(std::stoul(h, nullptr, 16))));
      out[c[0] + " " + c[2]] = v;
    }
    return out;
  }();
  return m;
}

}  // namespace

TEST_CASE("public: the fp32 HuggingFace path's phase error, n = 128, B = 1e4, grows with the position") {
  const auto p = plan("rope:dim=128,base=1e4");
  const std::pair<double, double> cases[] = {{4095, 1.37e-4}, {32767, 1.70e-3}, {262143, 1.44e-2}, {1048575, 3.07e-2},
                                             {9999999, 0.632}};
  for (const auto& [position, printed] : cases) {
    CAPTURE(position);
    check_printed(phase_errors(p, position).phase_error_max, printed);
  }
}

TEST_CASE("public: bf16 inverse frequencies lose the phase by p = 512 (Modalities PR #462)") {
  Pipeline bf;
  bf.inv_freq_dtype = Dtype::bf16;
  const auto p = plan("rope:dim=128,base=1e4", bf);
  check_printed(phase_errors(p, 512).inv_freq_part_max, 0.626);
  check_printed(phase_errors(p, 2048).inv_freq_part_max, 2.505, 4);
  check_printed(phase_errors(p, 4096).inv_freq_part_max, 5.01);
  // Keeping theta in fp32 and rounding only cos and sin to bf16: each entry is off by at most 2^-9 (half a bf16
  // ulp below 1), so the phase read back from (cos, sin) is off by at most about sqrt(2) 2^-9 = 2.8e-3, plus the fp32
  // angle's own error (below 4096 an fp32 angle is within 2^-12, half its ulp, of p theta_fp32).
  Pipeline tables;
  tables.dtype = Dtype::bf16;
  const auto q = plan("rope:dim=128,base=1e4", tables);
  double worst = 0, worst_entry = 0;
  for (double pos = 0; pos <= 4095; ++pos) {
    const auto e = phase_errors(q, pos);
    worst = std::max(worst, e.table_phase_error_max);
    worst_entry = std::max(worst_entry, e.table_error_max);
  }
  CHECK(worst <= std::sqrt(2.0) * std::ldexp(1.0, -9) + std::ldexp(1.0, -12));
  CHECK(worst > std::ldexp(1.0, -9));  // well past one entry's error: both entries' roundings add up
  CHECK(worst_entry <= std::ldexp(1.0, -9) + std::ldexp(1.0, -12));
}

TEST_CASE("public: a TF32 angle matmul holds position 2049 as 2048") {
  Pipeline t;
  t.dtype = Dtype::tf32;
  const auto held = held_table(plan("rope:dim=128,base=1e4", t), 2049);
  CHECK(held[0].angle == 2048);  // theta_0 = 1
}

TEST_CASE("the phase error splits into its parts: |total| <= inverse-frequency part + angle rounding") {
  const auto p = plan("rope:dim=128,base=5e5");
  for (double pos : {1.0, 1000.0, 65535.0, 1e6, 2147483647.0}) {
    const auto e = phase_errors(p, pos);
    CAPTURE(pos);
    CHECK(e.angle_part_max <= std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(pos + 1))) - 25) + 1e-300);  // ulp/2
    if (e.inv_freq_part_max + e.angle_part_max < 3) CHECK(e.phase_error_max <= e.inv_freq_part_max + e.angle_part_max + 1e-12);
  }
}

TEST_CASE("transformers' bf16 and fp16 cos/sin tables, CPU and GPU, bit for bit") {
  std::ifstream cf(kData + "configs.json");
  std::stringstream text;
  text << cf.rdbuf();
  const auto cases = nlohmann::json::parse(python_json_to_strict(text.str(), "configs.json")).at("cases");
  std::ifstream f(kData + "cos-sin-tables.csv");
  std::string line;
  std::getline(f, line);
  std::map<std::string, std::pair<int, int>> tally;  // "case dtype device" -> (entries, equal)
  int fp32_within_ulp = 0, fp32_entries = 0;
  while (std::getline(f, line)) {
    std::stringstream row(line);
    std::string name, device, dtype, position, cos_bits, sin_bits;
    std::getline(row, name, ',');
    std::getline(row, device, ',');
    std::getline(row, dtype, ',');
    std::getline(row, position, ',');
    std::getline(row, cos_bits, ',');
    std::getline(row, sin_bits, ',');
    const Model m = read_hf_config(cases.at(name).at("config").dump(), name);
    Pipeline pipe;
    pipe.dtype = parse_dtype(dtype, Where("test"));
    PrecisionPlan pl = plan_precision("test", m.layer_types.at(0).encoding, pipe);
    // Stages 2-3 on the inverse frequencies that device held (its own pow kernel; stage 1 is checked elsewhere).
    const auto& buffer = inv_freq_buffers().at(name + " " + device);
    REQUIRE(buffer.size() == pl.theta_held.size());
    pl.theta_held = buffer;
    const auto held = held_table(pl, std::stod(position));
    std::stringstream cs(cos_bits), ss(sin_bits);
    std::string hc, hs;
    for (std::size_t i = 0; cs >> hc && ss >> hs; ++i) {
      REQUIRE(i < held.size());
      const auto want_cos = static_cast<std::uint32_t>(std::stoul(hc, nullptr, 16));
      const auto want_sin = static_cast<std::uint32_t>(std::stoul(hs, nullptr, 16));
      if (pipe.dtype == Dtype::fp32) {
        // fp32 tables: PyTorch's cosf / sinf (CPU and GPU) are within 1 ulp of the correctly rounded value (spec
        // section 1); bf16 and fp16 tables below are bit for bit.
        const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::abs(held[i].cos), 1e-30)) - 23);
        const double sin_ulp = std::ldexp(1.0, std::ilogb(std::max(std::abs(held[i].sin), 1e-30)) - 23);
        fp32_entries += 2;
        // With an attention factor a != 1 (gpt-oss's YaRN), one ulp of cos before the product is up to two after it.
        const double ulps = pl.attention_factor == 1 ? 1 : 2;
        fp32_within_ulp += (std::abs(from_bits(Dtype::fp32, want_cos) - held[i].cos) <= ulps * ulp) +
                           (std::abs(from_bits(Dtype::fp32, want_sin) - held[i].sin) <= ulps * sin_ulp);
        continue;
      }
      auto& t = tally[name + " " + dtype + " " + device];
      t.first += 2;
      t.second += (bits_of(pipe.dtype, held[i].cos) == want_cos) + (bits_of(pipe.dtype, held[i].sin) == want_sin);
    }
  }
  REQUIRE(!tally.empty());
  for (const auto& [key, t] : tally) {
    CAPTURE(key);
    CHECK(t.second == t.first);
  }
  CHECK(fp32_within_ulp == fp32_entries);
}

#if defined(__GNUC__) && !defined(__clang__)
#include <quadmath.h>

namespace {

// An independent route in binary128 (113 bits; libquadmath): p theta_exact is exact there (31 + 53 bits), 2 pi is
// good to 2^-113, so the reduced angles are good to 1e-25 rad at 2^31. The held values are rebuilt from the spec's
// stage formulas (precision.md section 1), with cos and sin correctly rounded to fp32 from binary128.
using Quad = __float128;
const Quad kTwoPiQuad = 2 * acosq(static_cast<Quad>(-1));  // (M_PIq needs GNU literals)
Quad wrap_quad(Quad x) { return x - roundq(x / kTwoPiQuad) * kTwoPiQuad; }

struct QuadReference {
  std::vector<double> angle, cos, sin;
  std::vector<Quad> exact_cos, exact_sin;  ///< a cos(p theta_exact), a sin(p theta_exact)
  PhaseErrors errors;
};
QuadReference quad_reference(const PrecisionPlan& plan, double p) {
  QuadReference r;
  r.errors = {0, 0, 0, 0, 0};
  const Pipeline& pipe = plan.pipeline;
  const Dtype table = pipe.kind == PipelineKind::ggml || pipe.dtype == Dtype::tf32 ? Dtype::fp32 : pipe.dtype;
  const auto a32 = static_cast<float>(plan.held_attention_factor);
  auto running = static_cast<float>(p);
  for (std::size_t i = 0; i < plan.theta_held.size(); ++i) {
    const double th = plan.theta_held[i], te = plan.theta_exact[i];
    double angle = 0;
    if (pipe.kind == PipelineKind::ggml) {
      // ggml_rope_cache_init's running product, then rope_yarn's interpolation and ramp (llama.cpp, in float).
      if (i) running = running * static_cast<float>(plan.ggml_theta_scale);
      const float interp = static_cast<float>(plan.ggml_freq_scale) * running;
      if (plan.ggml_ramp.empty()) {
        angle = interp;
      } else {
        const auto ramp = static_cast<float>(plan.ggml_ramp[i]);
        const volatile float keep = interp * (1 - ramp), extrap = running * ramp;  // no FMA: llama.cpp's own order
        angle = keep + extrap;
      }
    } else if (pipe.dtype == Dtype::tf32) {
      angle = static_cast<float>(round_to(Dtype::tf32, p) * round_to(Dtype::tf32, th));
    } else {
      angle = static_cast<float>(p) * static_cast<float>(th);
    }
    auto tab = [&](Quad v) {
      auto f = static_cast<float>(v);
      if (a32 != 1) f *= a32;
      return round_to(table, f);
    };
    // ggml's rope_yarn calls the C library's cosf / sinf (not always correctly rounded: the library's own values).
    const bool libm = pipeline_info(pipe.kind).sincos == SinCos::libm_float;
    const auto af = static_cast<float>(angle);
    const double c = libm ? round_to(table, std::cos(af) * a32) : tab(cosq(angle));
    const double s = libm ? round_to(table, std::sin(af) * a32) : tab(sinq(angle));
    r.angle.push_back(angle);
    r.cos.push_back(c);
    r.sin.push_back(s);
    const Quad exact = static_cast<Quad>(p) * te, a = plan.attention_factor;
    PhaseErrors& e = r.errors;
    e.phase_error_max = std::max(e.phase_error_max, static_cast<double>(fabsq(wrap_quad(angle - exact))));
    e.inv_freq_part_max = std::max(e.inv_freq_part_max, static_cast<double>(fabsq(p * (static_cast<Quad>(th) - te))));
    e.angle_part_max = std::max(e.angle_part_max, static_cast<double>(fabsq(angle - static_cast<Quad>(p) * th)));
    const Quad reduced = wrap_quad(exact);
    r.exact_cos.push_back(a * cosq(reduced));
    r.exact_sin.push_back(a * sinq(reduced));
    e.table_error_max = std::max({e.table_error_max, static_cast<double>(fabsq(c - a * cosq(reduced))),
                                  static_cast<double>(fabsq(s - a * sinq(reduced)))});
    e.table_phase_error_max =
        std::max(e.table_phase_error_max, static_cast<double>(fabsq(wrap_quad(atan2q(s, c) - reduced))));
  }
  return r;
}

}  // namespace

TEST_CASE("phase errors and held tables against a binary128 route, positions 0 .. 2^31 - 1") {
  // The library reduces p theta by 2 pi in double-double and takes a 1-ulp vector sincos; the route here does all
  // in binary128. Tolerances: the phase errors are differences of reduced angles, each within a few ulp of the
  // unwrapped difference (4e-16 (|d| + 4), |d| <= inverse-frequency part + angle part); the parts are one rounding
  // each (2^-52 relative); the table error and phase within 1e-15 (the exact cos to 2 ulp, atan2 to 1 ulp, of a <= 2).
  // The held tables must agree bit for bit (both correctly rounded to fp32, then cast; ggml's both cosf / sinf).
  struct Case {
    const char* spelling;
    PipelineKind kind;
    Dtype dtype, inv_freq;
  };
  const Case cases[] = {
      {"rope:dim=128,base=1e4", PipelineKind::huggingface, Dtype::fp32, Dtype::fp32},
      {"rope:dim=128,base=1e4", PipelineKind::huggingface, Dtype::bf16, Dtype::fp32},
      {"rope:dim=128,base=1e4", PipelineKind::huggingface, Dtype::fp16, Dtype::fp32},
      {"rope:dim=128,base=1e4", PipelineKind::huggingface, Dtype::tf32, Dtype::fp32},
      {"rope:dim=128,base=1e4", PipelineKind::huggingface, Dtype::bf16, Dtype::bf16},
      {"rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096,beta_fast=32,beta_slow=1)", PipelineKind::huggingface,
       Dtype::bf16, Dtype::fp32},  // gpt-oss-like: attention factor 1.3466 on the tables
      {"rope:dim=128,base=5e5,scaling=llama3(factor=8,low=1,high=4,orig=8192)", PipelineKind::huggingface, Dtype::fp16,
       Dtype::fp32},
      {"rope:dim=128,base=1e4", PipelineKind::ggml, Dtype::fp32, Dtype::fp32},
      {"rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096)", PipelineKind::ggml, Dtype::fp32, Dtype::fp32},
      {"rope:dim=128,base=1e4,scaling=linear(factor=4)", PipelineKind::ggml, Dtype::fp32, Dtype::fp32},
  };
  std::vector<double> positions = {0, 1, 2, 4095, 16777215, 16777216, 16777217, 1e9, 2147483646, 2147483647};
  Rng rng(22, 0, 0);
  for (int i = 0; i < 24; ++i) positions.push_back(std::floor(rng.uniform() * 2147483648.0));
  int entries = 0;
  for (const Case& c : cases) {
    Pipeline pipe;
    pipe.kind = c.kind;
    pipe.dtype = c.dtype;
    pipe.inv_freq_dtype = c.inv_freq;
    const PrecisionPlan pl = plan(c.spelling, pipe);
    for (const double p : positions) {
      CAPTURE(c.spelling);
      CAPTURE(dtype_name(c.dtype));
      CAPTURE(p);
      const QuadReference want = quad_reference(pl, p);
      const auto held = held_table(pl, p);
      const PhaseErrors got = phase_errors(pl, p);
      // The exact tables to 2.5 ulp of their own value (sincos 1 ulp, the low part's correction and the product by a
      // half an ulp each): relative accuracy even next to a zero of cos, which the double-double reduction keeps.
      HeldArrays arrays;
      fill_held(pl, p, arrays);
      for (std::size_t i = 0; i < held.size(); ++i) {
        for (const auto& [v, q] : {std::pair{arrays.exact_cos[i], want.exact_cos[i]}, std::pair{arrays.exact_sin[i], want.exact_sin[i]}}) {
          const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::abs(v), 1e-300)) - 52);
          if (!(fabsq(v - q) <= 2.5 * ulp)) {
            CAPTURE(i);
            CAPTURE(v);
            CHECK(static_cast<double>(fabsq(v - q) / ulp) <= 2.5);
          }
        }
      }
      for (std::size_t i = 0; i < held.size(); ++i) {
        entries += 2;
        if (held[i].angle != want.angle[i] || held[i].cos != want.cos[i] || held[i].sin != want.sin[i]) {
          CAPTURE(i);
          CHECK(held[i].angle == want.angle[i]);
          CHECK(held[i].cos == want.cos[i]);
          CHECK(held[i].sin == want.sin[i]);
        }
      }
      const PhaseErrors& w = want.errors;
      CHECK(std::abs(got.phase_error_max - w.phase_error_max) <= 4e-16 * (w.inv_freq_part_max + w.angle_part_max + 4));
      CHECK(std::abs(got.inv_freq_part_max - w.inv_freq_part_max) <= 0x1p-52 * w.inv_freq_part_max);
      CHECK(std::abs(got.angle_part_max - w.angle_part_max) <= 0x1p-52 * w.angle_part_max);
      CHECK(std::abs(got.table_error_max - w.table_error_max) <= 1e-15);
      CHECK(std::abs(got.table_phase_error_max - w.table_phase_error_max) <= 1e-15);
    }
  }
  CHECK(entries > 30000);
}
#endif

TEST_CASE("ggml: the angle at position 1, against the scheme's float32 ggml frequencies and ggml_grid") {
  // YaRN: the frequencies' Convention::ggml in float32 (scaling/yarn.cpp, llama.cpp's rope_yarn on its running
  // product) is a second implementation; at position 1 the pipeline's per-position arithmetic must give its floats.
  // Plain, partial and linear: ggml_grid (the running product, scaling/scheme.hpp) times fl32(1/s), in float.
  Pipeline g;
  g.kind = PipelineKind::ggml;
  for (const char* text : {"rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096)",
                           "rope:dim=128,base=1e6,scaling=yarn(factor=4,orig=32768,beta_fast=16,beta_slow=2)"}) {
    CAPTURE(text);
    const PrecisionPlan pl = plan(text, g);
    const FrequencyTable f = frequencies(parse_encoding(text), std::nullopt, Convention::ggml, true);
    const auto held = held_table(pl, 1);
    REQUIRE(held.size() == static_cast<std::size_t>(f.theta.rows()));
    for (std::size_t i = 0; i < held.size(); ++i) {
      CAPTURE(i);
      CHECK(held[i].angle == f.theta(static_cast<Eigen::Index>(i), 0));
      CHECK(held[i].inv_freq == held[i].angle);
    }
    CHECK(pl.held_attention_factor == f.attention_factor);
  }
  for (const auto& [text, base, r, factor] : {std::tuple{"rope:dim=128,base=1e4,scaling=linear(factor=4)", 1e4, 128, 4.0},
                                              std::tuple{"rope:dim=96,base=1e4,partial=0.5", 1e4, 48, 1.0},
                                              std::tuple{"rope:dim=128,base=5e5", 5e5, 128, 1.0}}) {
    CAPTURE(text);
    const auto held = held_table(plan(text, g), 1);
    const auto grid = scaling::ggml_grid<float>(base, r, static_cast<int>(held.size()));
    for (std::size_t i = 0; i < held.size(); ++i) {
      CAPTURE(i);
      CHECK(held[i].angle == static_cast<float>(1 / factor) * grid[i]);
    }
  }
  // Not modelled: the schemes whose factors llama.cpp reads from the GGUF (rope_freqs).
  CHECK_THROWS_WITH_AS(plan("rope:dim=128,base=5e5,scaling=llama3(factor=8,low=1,high=4,orig=8192)", g),
                       doctest::Contains("llama3 and longrope come with the GGUF's rope_freqs factors"), InputError);
}

TEST_CASE("largest_finite_position: fp16 angles end at 65519, the others hold every position") {
  // fp16's largest finite value is 65504 (0x7bff); 65520 is the tie between it and 65536 (inf), and ties go to the
  // even significand, 65536: every position from 65520 on rounds to inf, 65519 to 65504 (theta_0 = 1).
  Pipeline half;
  half.dtype = Dtype::fp16;
  half.angle_dtype = Dtype::fp16;
  const PrecisionPlan p = plan_precision("test", parse_encoding("rope:dim=64,base=1e4"), half);
  CHECK(largest_finite_position(p) == 65519);
  CHECK(round_to(Dtype::fp16, 65519) == 65504);
  CHECK(std::isinf(round_to(Dtype::fp16, 65520)));
  for (const Dtype d : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16}) {
    Pipeline q;
    q.dtype = d;
    CHECK(largest_finite_position(plan_precision("test", parse_encoding("rope:dim=64,base=1e4"), q)) == 2147483647);
  }
}
