// ropekit model FILE: the table of layer types from a config.json, and refusals of bad files (exit 2, one line,
// nothing written). The reader's numbers are checked against transformers in tests/models/test_hf_config.cpp; here
// the command line's columns and that its spellings feed back into other commands.

#include <sys/stat.h>

#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "ropekit/core/error.hpp"
#include "support.hpp"

using namespace ropekit::test;

TEST_CASE("ropekit model: one row per layer type, and each encoding runs in ropekit kernel") {
  ScratchDir dir("model");
  // Gemma 3 4B's published keys (transformers 4 style).
  const std::string path = dir.write("config.json", R"({"model_type": "gemma3_text", "head_dim": 256,
    "num_hidden_layers": 34, "sliding_window": 1024, "sliding_window_pattern": 6, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "max_position_embeddings": 131072,
    "rope_scaling": {"rope_type": "linear", "factor": 8.0}})");
  const auto r = run_ropekit("model '" + path + "' --format json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["layer_type"] == "sliding_attention");
  CHECK(rows[0]["layers"] == 29);  // 34 layers, every 6th global: 5 global, 29 sliding
  CHECK(rows[1]["layers"] == 5);
  CHECK(rows[1]["encoding"] == "rope:dim=256,base=1000000,F=128,scaling=linear(factor=8)");
  CHECK(rows[0]["window"] == "sliding 1024");
  for (const auto& row : rows) {
    const auto k = run_ropekit("kernel --encoding '" + row["encoding"].get<std::string>() + "' --lags 0,1");
    CAPTURE(k.err);
    CHECK(k.exit_code == 0);
  }
}

TEST_CASE("ropekit model: bad files are refused in one line with nothing written") {
  ScratchDir dir("model-bad");
  check_rejected("model '" + dir.write("a.json", "{\"head_dim\": 64, \"rope_theta\": -1}") + "'",
                 "rope_theta = -1 (must be a number > 0)");
  check_rejected("model '" + dir.write("b.json", "{\"head_dim\": 64,") + "'", "not JSON");
  check_rejected("model '" + dir.write("c.txt", "GGU") + "'", "not a model file");
  check_rejected("model '" + dir.write("d.gguf", "GGUF") + "'", "the version needs 4 bytes");
  check_rejected("model '" + dir.file("missing.json") + "'", "model file = ");
}

TEST_CASE("--model FILE[:LAYER_TYPE] stands for the layer types' encodings in kernel, frequencies and check") {
  const std::string gemma = source_path("data/models/gemma-3-4b.json");
  // kernel: every layer type of the file, each its own rows, equal to the spelled encodings' kernels (lags within
  // the sliding window of 1024), each row led by its layer type.
  const auto all = run_ropekit("kernel --model '" + gemma + "' --lags 0,1000");
  const auto spelled = run_ropekit("kernel --encoding 'rope:dim=256,base=10000,F=128' "
                                   "--encoding 'rope:dim=256,base=1000000,F=128,scaling=linear(factor=8)' --lags 0,1000");
  CAPTURE(all.err);
  REQUIRE(all.exit_code == 0);
  std::string expected;
  std::size_t line = 0;
  for (std::size_t at = 0, end; (end = spelled.out.find('\n', at)) != std::string::npos; at = end + 1, ++line)
    expected += std::string(line == 0 ? "layer_type" : line <= 2 ? "sliding_attention" : "full_attention") + "," +
                spelled.out.substr(at, end + 1 - at);
  CHECK(line == 5);
  CHECK(all.out == expected);
  // One layer type by name.
  const auto full = run_ropekit("frequencies --model '" + gemma + ":full_attention'");
  const auto full_spelled = run_ropekit("frequencies --encoding 'rope:dim=256,base=1000000,F=128,scaling=linear(factor=8)'");
  CHECK(full.exit_code == 0);
  CHECK(full.out == full_spelled.out);
  const auto check = run_ropekit("check --model '" + gemma + ":sliding_attention'");
  CHECK(check.exit_code == 0);
  CHECK(check.out.find("rope:dim=256,base=10000,F=128") != std::string::npos);
  // A command that needs one encoding refuses a file whose layer types differ, listing them; an unknown type too.
  check_rejected("frequencies --model '" + gemma + "'",
                 "--model = '" + gemma + "' (must be a file and a layer type, " + gemma +
                     ":<layer type>, where the layer types' encodings differ (layer types: sliding_attention, "
                     "full_attention))");
  check_rejected("frequencies --model '" + gemma + ":global'", "(must be a layer type of the model: one of "
                                                               "sliding_attention, full_attention)");
  check_rejected("frequencies --model '" + gemma + ":full_attention' --encoding rope", "--encoding");
}

TEST_CASE("ropekit model, --model: a FIFO is refused before it is opened (it used to hang)") {
  ScratchDir dir("model-fifo");
  const std::string fifo = dir.file("config.json");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  check_rejected("model '" + fifo + "'", "model file = '" + fifo + "' (must be a regular file, not a FIFO (named pipe))");
  check_rejected("kernel --model '" + fifo + "' --lags 0", "(must be a regular file, not a FIFO (named pipe))");
}

TEST_CASE("ropekit model: an ALiBi model's heads as layer types, each a spelling the commands take") {
  ScratchDir dir("model-alibi");
  // BLOOM with 8 heads: c = 8, slopes 2^-1 .. 2^-8 (modeling_bloom.py's build_alibi_tensor), exact in float32.
  const std::string bloom = dir.write("bloom.json", R"({"model_type": "bloom", "n_head": 8, "hidden_size": 512,
    "n_layer": 4})");
  const auto r = run_ropekit("model '" + bloom + "' --format json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 8);
  for (int h = 0; h < 8; ++h) {
    CHECK(rows[h]["layer_type"] == "full_attention/head_" + std::to_string(h));
    CHECK(rows[h]["encoding"].get<std::string>().rfind("alibi:slope=" + ropekit::format_number(std::exp2(-(h + 1))), 0) == 0);
    CHECK(rows[h]["rotary_dims"] == 0);
  }
  CHECK(run_ropekit("kernel --model '" + bloom + ":full_attention/head_2' --lags 0,10").exit_code == 0);
  // An OPT config is refused by name (it used to read as rope:dim=64,base=10000).
  check_rejected("model '" + dir.write("opt.json", R"({"model_type": "opt", "hidden_size": 768,
    "num_attention_heads": 12})") + "'", "learned absolute position embeddings");
}

TEST_CASE("Llama 4's NoPE layers: as wide as the head, by the config's name, and not relative in check") {
  const std::string scout = source_path("data/models/llama-4-scout.json");
  // Content variance at lag 0 (s(0) = 1): the NoPE layer's equals the 128-dim rope layer's, 2 x 128.
  const auto k = run_ropekit("kernel --model '" + scout + "' --lags 0 --format json");
  CAPTURE(k.err);
  REQUIRE(k.exit_code == 0);
  const auto rows = nlohmann::json::parse(k.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["layer_type"] == "chunked_attention");
  CHECK(rows[1]["layer_type"] == "full_attention");
  CHECK(rows[1]["encoding"] == "nope:dim=128");
  CHECK(rows[0]["content_variance"].get<double>() == 256);
  CHECK(rows[1]["content_variance"].get<double>() == 256);
  // check: the layer with the query temperature is not relative (its score depends on the query position).
  const auto c = run_ropekit("check --model '" + scout + "' --format json");
  CAPTURE(c.err);
  REQUIRE(c.exit_code == 0);
  std::map<std::string, bool> relative;
  for (const auto& row : nlohmann::json::parse(c.out))
    if (row["quantity"] == "is_relative") relative[row["encoding"].get<std::string>()] = row["value"].get<bool>();
  CHECK(relative.at("nope:dim=128") == false);
  CHECK(relative.size() == 2);
  CHECK(c.err.find("full_attention: is_relative false: the score is scaled by s(p)") != std::string::npos);
  // The same encoding given by hand has no temperature: relative.
  const auto plain = run_ropekit("check --encoding 'nope:dim=128' --format json");
  REQUIRE(plain.exit_code == 0);
  CHECK(nlohmann::json::parse(plain.out)[0]["value"] == true);
}
