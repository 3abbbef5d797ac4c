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
    PrecisionPlan pl = plan_precision("test", parse_encoding(m.layer_types.at(0).encoding), pipe);
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
