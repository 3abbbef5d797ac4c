// ropekit model FILE: the table of layer types from a config.json, and refusals of bad files (exit 2, one line,
// nothing written). The reader's numbers are checked against transformers in tests/models/test_hf_config.cpp; here
// the command line's columns and that its spellings feed back into other commands.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

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
