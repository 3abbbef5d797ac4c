// ropekit precision: the spec's public numbers through the command line, a bf16 table against the one transformers
// held (tests/data/transformers/cos-sin-tables.csv, CPU), and the refusals (one line, exit 2, nothing written).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace ropekit::test;

TEST_CASE("precision: fp32 phase errors of n = 128, B = 1e4 at the spec's positions") {
  const auto r = run_ropekit("precision --encoding rope:dim=128,base=1e4 --positions 4095,32767,262143,1048575,9999999 "
                             "--format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto rows = nlohmann::json::parse(r.out);
  const double printed[] = {1.37e-4, 1.70e-3, 1.44e-2, 3.07e-2, 0.632};  // precision.md section 3, 3 digits
  REQUIRE(rows.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    const double x = rows[i]["phase_error_max"].get<double>();
    CAPTURE(x);
    CHECK(std::abs(x - printed[i]) <= 0.005 * printed[i] * 1.01);
  }
}

TEST_CASE("precision --table --dtype bf16: transformers' CPU table of default_128_1e4 at position 1857, bit for bit") {
  std::ifstream f(source_path("tests/data/transformers/cos-sin-tables.csv"));
  std::string line, cos_bits;
  while (std::getline(f, line))
    if (line.rfind("default_128_1e4,cpu,bfloat16,1857,", 0) == 0) cos_bits = line.substr(line.find(",1857,") + 6);
  REQUIRE(!cos_bits.empty());
  cos_bits = cos_bits.substr(0, cos_bits.find(','));
  const auto r = run_ropekit("precision --encoding rope:dim=128,base=1e4 --dtype bf16 --positions 1857 --table --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto rows = nlohmann::json::parse(r.out);
  std::stringstream bits(cos_bits);
  std::size_t i = 0;
  for (std::string h; bits >> h; ++i) {
    REQUIRE(i < rows.size());
    const float want = std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(h, nullptr, 16)) << 16);
    CHECK(rows[i]["cos"].get<double>() == static_cast<double>(want));
  }
  CHECK(i == 64);
}

TEST_CASE("precision: refusals") {
  check_rejected("precision --encoding rope:dim=128 --dtype fp8", "--dtype = 'fp8' (must be one of fp32, tf32, bf16, fp16)");
  check_rejected("precision --encoding rope:dim=128 --positions 2147483648",
                 "--positions = 2147483648 (must be an integer in [0, 2^31 - 1])");
  check_rejected("precision --encoding rope:dim=128 --positions 1.5", "--positions = 1.5 (must be an integer");
  check_rejected("precision --encoding alibi:slope=0.5,L=10", "(must be a rope encoding");
  check_rejected("precision --encoding 'rope:dim=128,scaling=llama3(factor=8,low=1,high=4,orig=8192)' --pipeline ggml",
                 "--pipeline = ggml (must be huggingface for this encoding");
  check_rejected("precision --encoding rope:dim=128 --pipeline onnx", "--pipeline = 'onnx' (must be huggingface, ggml, vllm, flash or llama4)");
  check_rejected("precision --encoding rope:dim=128 --positions 0:3e9", "--positions = 3000000000 positions (must be at most");
  check_rejected("precision --encoding rope:dim=128 --tolerance 0", "--tolerance = 0 (must be finite and > 0)");
  check_rejected("precision --encoding rope:dim=128 --tolerance nan", "--tolerance = nan (must be");
  check_rejected("precision --encoding rope:dim=128 --tolerance -1e-3", "--tolerance = -0.001 (must be finite and > 0)");
  check_rejected("precision --encoding rope:dim=128 --tolerance 1e-3 --table", "--table = given with tolerance");
  check_rejected("precision --encoding rope:dim=128 --tolerance 1e-3 --positions 0:10.5:0.5",
                 "--positions = a step of 0.5 (must be an integer step)");
  check_rejected("precision --encoding rope:dim=128 --tolerance 1e-3 --positions 0:2147483649",
                 "--positions = 2147483648 (must be an integer in [0, 2^31 - 1])");
  check_rejected("precision --encoding rope:dim=128 --tolerance 1e-3 --lags 10 --positions 0:2147483648",
                 "--positions + lags = 2147483657 (must be an integer in [0, 2^31 - 1])");
}

namespace {

std::string run_ok(const std::string& args) {
  const auto r = run_ropekit(args);
  CAPTURE(args);
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE("precision --tolerance: the first position past it over every position, exact for the phase") {
  // Llama 2's fp32 head: the phase error first exceeds 1e-3 at 17582. Independent route: every position of
  // 17500:17600 printed by the row mode, the first one above 1e-3 read off.
  const auto rows = run_ok("precision --encoding rope:dim=128,base=1e4 --positions 17500:17600 --format json");
  double first = -1;
  for (const auto& r : nlohmann::json::parse(rows))
    if (first < 0 && r["phase_error_max"].get<double>() > 1e-3) first = r["position"].get<double>();
  CHECK(first == 17582);
  const auto found = nlohmann::json::parse(
      run_ok("precision --encoding rope:dim=128,base=1e4 --positions 0:2147483648 --tolerance 1e-3 --format json"));
  REQUIRE(found.size() == 1);
  CHECK(found[0]["quantity"] == "phase_error_max");
  CHECK(found[0]["first_position"].get<double>() == first);
  CHECK(found[0]["search"] == "exact");
  CHECK(found[0]["positions_evaluated"].get<double>() < 1000);
  // Not exceeded: the cell is empty.
  CHECK(run_ok("precision --encoding rope:dim=128,base=1e4 --positions 0:1000 --tolerance 1e-3") ==
        "quantity,lag,tolerance,first_position,value,positions_evaluated,search\n"
        "phase_error_max,,0.001,,0,0,exact\n");
}

TEST_CASE("precision --lags: score errors per (lag, position), against transformers' CPU measurement") {
  // score-error.csv (64 trials of its own content, CPU): RMS relative error 7.7e-3 at p = 2^24 - 1 in fp32, bf16 and
  // fp16 alike (the fp32 angle dominates), 2e-4 at p = 0 in bf16. Monte Carlo of 64 draws: within a factor 1.5.
  const auto r = run_ropekit("precision --encoding rope:dim=128,base=1e4 --lags 1 --positions 0,16777215 --dtype bf16 "
                             "--seed 3 --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["lag"] == 1);
  const double at0 = rows[0]["score_rms_rel_error"].get<double>(), far = rows[1]["score_rms_rel_error"].get<double>();
  CHECK(at0 > 1.95e-4 / 1.5);
  CHECK(at0 < 1.95e-4 * 1.5);
  CHECK(far > 7.7e-3 / 1.5);
  CHECK(far < 7.7e-3 * 1.5);
  CHECK(rows[1]["score_max_rel_error"].get<double>() >= far);
  // Deterministic for a seed.
  CHECK(run_ropekit("precision --encoding rope:dim=128,base=1e4 --lags 1 --positions 0,16777215 --dtype bf16 --seed 3 "
                    "--format json").out == r.out);
  check_rejected("precision --encoding rope:dim=128 --lags 1 --positions 2147483647",
                 "--positions + lags = 2147483648 (must be an integer in [0, 2^31 - 1])");
  check_rejected("precision --encoding rope:dim=128 --lags 1 --table", "(must be one of --table and --lags)");
  check_rejected("precision --encoding rope:dim=128 --lags 1 --trials 0", "--trials = 0 (must be an integer in [1,");
}
