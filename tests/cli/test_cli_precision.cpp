// ropekit precision: the spec's public numbers through the command line, a bf16 table against the one transformers
// held (tests/data/transformers/cos-sin-tables.csv, CPU), and the refusals (one line, exit 2, nothing written).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gguf_writer.hpp"
#include "support.hpp"

using namespace ropekit::test;

TEST_CASE("precision: fp32 phase errors of n = 128, B = 1e4 at the spec's positions") {
  const auto r = run_ropekit("precision --encoding rope:dim=128,base=1e4 --positions 4095,32767,262143,1048575,9999999 "
                             "--format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto rows = nlohmann::json::parse(r.out);
  const double printed[] = {1.37e-4, 1.70e-3, 1.44e-2, 3.07e-2, 0.632};  // precision.md section 3, 3 digits
  REQUIRE(rows.size() == 5);  // huggingface, ggml, vllm, flash, llama4
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
  check_rejected("precision --encoding rope:dim=128 --pipeline onnx",
                 "--pipeline = 'onnx' (must be huggingface, ggml, vllm, flash, llama4 or ggml-fma)");
  check_rejected("precision --encoding rope:dim=128 --pipeline ggml --dtype bf16",
                 "--dtype = bf16 (must be fp32 or fp16 with --pipeline ggml: ggml's CPU rope takes f32 and f16 tensors");
  check_rejected("precision --model '" + source_path("data/models/bloom-560m.json") + ":full_attention/head_0'",
                 "--model = 'bloom-560m.json: full_attention/head_0' (must be a model whose encoding is a rope");
  check_rejected("precision --encoding rope:dim=128 --positions 0:3e9",
                 "--positions = 2999999999 (must be an integer in [0, 2^31 - 1])");
  check_rejected("precision --encoding rope:dim=1024 --positions 0:2147483647",
                 "--positions = 2147483647 positions (must be at most");
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
  REQUIRE(found.size() == 3);
  CHECK(found[0]["quantity"] == "phase_error_max");
  CHECK(found[0]["first_position"].get<double>() == first);
  CHECK(found[0]["first_position_low"].get<double>() == first);  // exact: the interval is the answer
  CHECK(found[0]["first_position_high"].get<double>() == first);
  CHECK(found[0]["search"] == "exact");
  CHECK(found[0]["positions_evaluated"].get<double>() < 1000);
  CHECK(found[1]["quantity"] == "table_phase_error_max");
  CHECK(found[2]["quantity"] == "table_error_max");
  // Not exceeded: the cells are empty.
  CHECK(run_ok("precision --encoding rope:dim=128,base=1e4 --positions 0:1000 --tolerance 1e-3") ==
        "quantity,lag,tolerance,first_position,first_position_low,first_position_high,value,positions_evaluated,"
        "search,note\n"
        "phase_error_max,,0.001,,,,0,0,exact,\n"
        "table_phase_error_max,,0.001,,,,0,0,exact,\n"
        "table_error_max,,0.001,,,,0,0,exact,\n");
}

TEST_CASE("precision --tolerance --dtype: the tables' quantities per dtype (issue 32: bf16, fp16, fp32 all said 12559)") {
  // Llama 3.1 8B. Independent route: the row mode over 0:13000, the first row past 1e-3 in each column read off.
  const std::string model = "precision --model '" + source_path("data/models/llama-3.1-8b.json") + "'";
  std::map<std::string, std::map<std::string, double>> first;  // dtype -> column -> first position
  for (const std::string dtype : {"fp32", "bf16", "fp16"}) {
    for (const auto& r : nlohmann::json::parse(run_ok(model + " --dtype " + dtype + " --positions 0:13000 --format json")))
      for (const std::string c : {"phase_error_max", "table_phase_error_max", "table_error_max"})
        if (!first[dtype].count(c) && r[c].get<double>() > 1e-3) first[dtype][c] = r["position"].get<double>();
    const auto found = nlohmann::json::parse(run_ok(model + " --dtype " + dtype + " --tolerance 1e-3 --format json"));
    REQUIRE(found.size() == 3);
    for (const auto& f : found) {
      CAPTURE(dtype);
      CAPTURE(f["quantity"]);
      REQUIRE(first[dtype].count(f["quantity"].get<std::string>()));
      CHECK(f["first_position"].get<double>() == first[dtype][f["quantity"].get<std::string>()]);
    }
  }
  // The angle is the same in every dtype; the bf16 tables carry 2.4e-3 of phase well before it passes 1e-3.
  CHECK(first["bf16"]["phase_error_max"] == first["fp32"]["phase_error_max"]);
  CHECK(first["bf16"]["table_phase_error_max"] < first["fp32"]["table_phase_error_max"]);
  CHECK(first["bf16"]["table_phase_error_max"] < 100);
}

TEST_CASE("precision --tolerance: gpt-oss's bf16 tables are past 1e-3 at position 0, by the attention factor's rounding") {
  // YaRN's attention factor 0.1 ln 32 + 1 = 1.3465736 is 172.36 x 2^-7 in bf16's binade [1, 2): held as
  // 172 x 2^-7 = 1.34375 (by hand), 2.8e-3 off at position 0 where cos = 1.
  const auto found = nlohmann::json::parse(
      run_ok("precision --encoding 'rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096)' --dtype bf16 "
             "--tolerance 1e-3 --format json"));
  REQUIRE(found.size() == 3);
  CHECK(found[2]["quantity"] == "table_error_max");
  CHECK(found[2]["first_position"].get<double>() == 0);
  CHECK(found[2]["value"].get<double>() == doctest::Approx(1.3465735902799727 - 1.34375).epsilon(1e-9));
  const std::string note = found[2]["note"].get<std::string>();
  CAPTURE(note);
  CHECK(note.find("attention factor") != std::string::npos);
  CHECK(note.find("1.34657") != std::string::npos);
  CHECK(note.find("1.34375") != std::string::npos);
  CHECK(note.find("bf16") != std::string::npos);
  CHECK(found[1]["note"].get<std::string>().empty());  // no phase at position 0: the factor scales cos and sin alike
}

TEST_CASE("precision --lags --tolerance: the Monte Carlo answer with its 95% interval, to the digits it has") {
  const auto found = nlohmann::json::parse(run_ok(
      "precision --encoding rope:dim=128,base=1e4 --lags 1 --tolerance 1e-3 --positions 0:2147479552 --format json"));
  REQUIRE(found.size() == 1);
  const double p = found[0]["first_position"].get<double>(), lo = found[0]["first_position_low"].get<double>(),
               hi = found[0]["first_position_high"].get<double>();
  CHECK(lo < p);
  CHECK(p < hi);
  // Rounded to the unit of the half-width's leading digit: p, lo and hi are multiples of it.
  const double unit = std::pow(10.0, std::floor(std::log10((hi - lo) / 2)));
  CHECK(unit >= 1000);  // 64 trials: the RMS is known to ~9%, the position to about as much of ~1.3e6
  CHECK(std::fmod(p, unit) == 0);
  CHECK(std::fmod(lo, unit) == 0);
  CHECK(std::fmod(hi, unit) == 0);
  CHECK(found[0]["search"] == "bisection");
}

TEST_CASE("precision: positions past the dtype's finite angles are refused with the bound (no NaN rows)") {
  // fp16 angles: 65519 rounds to 65504, fp16's largest finite value, and 65520 to inf (by hand: test_pipeline.cpp).
  check_rejected("precision --encoding rope:dim=64,base=1e4 --angle-dtype fp16 --dtype fp16 --positions 65520",
                 "--positions = 65520 (must be at most 65519: the largest position whose fp16 angles of this encoding "
                 "are finite)");
  check_rejected("precision --encoding rope:dim=64,base=1e4 --angle-dtype fp16 --lags 2 --positions 65518",
                 "--positions + lags = 65520 (must be at most 65519");
  const auto rows = nlohmann::json::parse(
      run_ok("precision --encoding rope:dim=64,base=1e4 --angle-dtype fp16 --dtype fp16 --positions 65519 --format json"));
  REQUIRE(rows.size() == 1);
  CHECK(std::isfinite(rows[0]["phase_error_max"].get<double>()));
  // A tolerance over every position (the default) searches up to the bound: the phase passes 1 rad before it.
  const auto found = nlohmann::json::parse(
      run_ok("precision --encoding rope:dim=64,base=1e4 --angle-dtype fp16 --tolerance 1 --format json"));
  REQUIRE(found.size() == 3);
  CHECK(found[0]["first_position"].get<double>() <= 65519);
  check_rejected("precision --encoding rope:dim=64,base=1e4 --angle-dtype fp16 --positions 0:2147483648 --tolerance 1",
                 "--positions = 2147483647 (must be at most 65519");
}

TEST_CASE("precision: the output's size is estimated and capped before the first row") {
  // --table of 64 pairs: 6 cells of ~20 characters a row, 7680 bytes a position; the cap of 4 GB: 520833 positions.
  check_rejected("precision --encoding rope:dim=128 --table --positions 0:100000000",
                 "--positions = 100000000 positions (must be at most 520833 positions of 64 pairs with --table");
  check_rejected("precision --encoding rope:dim=128 --table --positions 0:100000000", "over the output cap of 4");
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

TEST_CASE("list pipelines: a row per --pipeline name, each accepted by precision; `list` alone names it") {
  const auto r = run_ropekit("list pipelines --format json");
  REQUIRE(r.exit_code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 6);  // huggingface, ggml, vllm, flash, llama4, ggml-fma
  for (const auto& row : rows) {
    const std::string name = row["pipeline"];
    CAPTURE(name);
    CHECK(!std::string(row["source"]).empty());
    // Every listed name runs (fp32 tables of a plain RoPE: every pipeline models it).
    CHECK(run_ropekit("precision --encoding rope:dim=8,base=1e4 --positions 7 --pipeline " + name).exit_code == 0);
  }
  CHECK(rows[1]["pipeline"] == "ggml");
  CHECK(rows[1]["convention"] == "ggml");
  CHECK(rows[1]["model dtypes"] == "fp32, fp16");
  CHECK(rows[5]["pipeline"] == "ggml-fma");
  CHECK(run_ropekit("list").out.find("pipelines") != std::string::npos);
  const auto bad = run_ropekit("list pipeline");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("schemes or pipelines") != std::string::npos);
}

TEST_CASE("precision --model: the pipeline the file implies, said in a note; --pipeline overrides; DeepSeek's rope part") {
  const auto hf = run_ropekit("precision --model '" + source_path("data/models/llama-3.1-8b.json") + "' --positions 1");
  CHECK(hf.exit_code == 0);
  CHECK(hf.err.find("ropekit precision: note: pipeline huggingface (the model file is a config.json") !=
        std::string::npos);
  const auto l4 = run_ropekit("precision --model '" + source_path("data/models/llama-4-scout.json") + ":chunked_attention' --positions 1");
  CHECK(l4.exit_code == 0);
  CHECK(l4.err.find("note: pipeline llama4 (the config's model_type is llama4") != std::string::npos);
  const auto named = run_ropekit("precision --model '" + source_path("data/models/llama-4-scout.json") + ":chunked_attention' --positions 1 "
                                 "--pipeline vllm");
  CHECK(named.exit_code == 0);
  CHECK(named.err.find("note: pipeline") == std::string::npos);
  const auto ds = run_ropekit("precision --model '" + source_path("data/models/deepseek-v3.json") + "' --positions 1,4095");
  CAPTURE(ds.err);
  CHECK(ds.exit_code == 0);
  CHECK(ds.err.find("its 128 nope dims carry no rotation and are held exactly") != std::string::npos);
  CHECK(ds.out.rfind("position,phase_error_max", 0) == 0);
}

TEST_CASE("precision --model FILE.gguf: ggml with a note; bf16 refused naming --dtype and --model, exit 2, nothing written") {
  ScratchDir dir("precision-gguf");
  const std::string gguf = dir.write(
      "llama.gguf", minimal_gguf({{"llama.rope.freq_base", 10000.0f}},
                                 {{"llama.attention.head_count", 32}, {"llama.embedding_length", 4096},
                                  {"llama.block_count", 32}},
                                 {{"general.architecture", "llama"}}));
  const auto r = run_ropekit("precision --model '" + gguf + "' --positions 4095");
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err == "ropekit precision: note: pipeline ggml (the model file is a GGUF, run by llama.cpp's ggml rope; "
                 "--pipeline to choose another)\n");
  // The same numbers as the ggml pipeline named on the model's encoding.
  CHECK(r.out == run_ropekit("precision --encoding rope:dim=128,base=10000 --pipeline ggml --positions 4095").out);
  check_rejected("precision --model '" + gguf + "' --dtype bf16",
                 "--dtype = bf16 (must be fp32 or fp16 with pipeline ggml, which --model implies (--pipeline to choose "
                 "another): ggml's CPU rope takes f32 and f16 tensors");
  CHECK(run_ropekit("precision --model '" + gguf + "' --dtype fp16 --positions 4095").exit_code == 0);
}
