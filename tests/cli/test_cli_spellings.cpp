// Spellings that say everything (issue 24 item 5), as a user meets them: canonical spellings print every scheme key,
// orig is never assumed, `ropekit list schemes` has a row per scheme key and `list encodings --verbose` examples
// parse.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/table.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;

namespace {

ropekit::CsvData csv(const std::string& text) { return ropekit::parse_csv(text, "stdout"); }

std::size_t column(const ropekit::CsvData& t, const std::string& name) {
  const auto it = std::find(t.columns.begin(), t.columns.end(), name);
  REQUIRE(it != t.columns.end());
  return static_cast<std::size_t>(it - t.columns.begin());
}

// The number of keys in every scheme's key table, counted over the alternatives of Scaling.
template <std::size_t... I>
std::size_t table_keys(std::index_sequence<I...>) {
  return (ropekit::scaling::scheme_keys(std::variant_alternative_t<I, ropekit::Scaling>{}).size() + ...);
}

}  // namespace

TEST_CASE("ropekit kernel prints llama3's and yarn's defaults in the encoding's spelling") {
  const auto r = run_ropekit("kernel --encoding 'rope:dim=128,base=5e5,scaling=llama3(factor=8,orig=8192)' "
                             "'rope:dim=64,scaling=yarn(factor=4,orig=2048)' --lags 0 --format csv");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv(r.out);
  REQUIRE(t.rows.size() == 2);
  const std::size_t e = column(t, "encoding");
  CHECK(t.rows[0][e] == "rope:dim=128,base=500000,F=64,scaling=llama3(factor=8,orig=8192,low=1,high=4)");
  CHECK(t.rows[1][e] == "rope:dim=64,base=10000,F=32,scaling=yarn(factor=4,orig=2048,beta_fast=32,beta_slow=1,truncate=true)");
  // The printed spelling runs again and prints itself.
  const auto again = run_ropekit("kernel --encoding '" + t.rows[0][e] + "' --lags 0 --format csv");
  REQUIRE(again.exit_code == 0);
  CHECK(csv(again.out).rows[0][e] == t.rows[0][e]);
}

TEST_CASE("a scheme spelled without orig is refused: exit 2, one line naming orig and what to give") {
  for (const char* scheme : {"yarn(factor=8)", "dynamic(factor=2)", "llama3(factor=8)",
                             "longrope(short=[1,1,1,1],long=[1,1,1,1])"}) {
    const std::string name = std::string(scheme).substr(0, std::string(scheme).find('('));
    ropekit::test::check_rejected(std::string("frequencies --encoding 'rope:dim=8,scaling=") + scheme + "'",
                                  name + ".orig = (missing) (must be given: " + name +
                                      " needs orig, the model's original context length");
  }
}

TEST_CASE("a model file's yarn takes orig from the file") {
  ScratchDir dir("spell-model");
  // original_max_position_embeddings given: orig is it; absent: transformers' standardize_rope_params fills it from
  // max_position_embeddings.
  const std::string given = dir.write("given.json", R"({"model_type": "qwen3", "head_dim": 128,
    "num_hidden_layers": 2, "max_position_embeddings": 131072, "rope_theta": 1000000,
    "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})");
  const std::string absent = dir.write("absent.json", R"({"model_type": "qwen3", "head_dim": 128,
    "num_hidden_layers": 2, "max_position_embeddings": 40960, "rope_theta": 1000000,
    "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})");
  for (const auto& [path, orig] : {std::pair{given, "32768"}, std::pair{absent, "40960"}}) {
    const auto r = run_ropekit("model '" + path + "' --format json");
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto rows = nlohmann::json::parse(r.out);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["encoding"] == std::string("rope:dim=128,base=1000000,F=64,scaling=yarn(factor=4,orig=") + orig +
                                     ",beta_fast=32,beta_slow=1,truncate=true)");
  }
}

TEST_CASE("list schemes: a row per key of every scheme, with default, meaning and transformers' key") {
  const auto r = run_ropekit("list schemes --format csv");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv(r.out);
  CHECK(t.columns ==
        std::vector<std::string>{"scheme", "key", "default", "constraint", "meaning", "transformers key"});
  CHECK(t.rows.size() == table_keys(std::make_index_sequence<std::variant_size_v<ropekit::Scaling>>()));
  // transformers' modeling_rope_utils.py reads llama3's factor, low_freq_factor, high_freq_factor and
  // original_max_position_embeddings; yarn's beta_fast defaults to 32 and beta_slow to 1 (`or 32`, `or 1`).
  struct Row {
    const char *scheme, *key, *def, *hf;
  };
  for (const Row& want : {Row{"llama3", "factor", "8", "factor"}, Row{"llama3", "low", "1", "low_freq_factor"},
                          Row{"llama3", "high", "4", "high_freq_factor"},
                          Row{"llama3", "orig", "required", "original_max_position_embeddings"},
                          Row{"yarn", "orig", "required", "original_max_position_embeddings"},
                          Row{"yarn", "beta_fast", "32", "beta_fast"}, Row{"yarn", "beta_slow", "1", "beta_slow"},
                          Row{"longrope", "short", "required", "short_factor"}}) {
    CAPTURE(want.scheme);
    CAPTURE(want.key);
    const auto it = std::find_if(t.rows.begin(), t.rows.end(),
                                 [&](const auto& row) { return row[0] == want.scheme && row[1] == want.key; });
    REQUIRE(it != t.rows.end());
    CHECK((*it)[2] == want.def);
    CHECK((*it)[5] == want.hf);
    CHECK(!(*it)[4].empty());
  }
  const auto json = run_ropekit("list schemes --format json");
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out).size() == t.rows.size());
}

TEST_CASE("list encodings --verbose: each line's keys and an example that parses") {
  const auto plain = csv(run_ropekit("list encodings --format csv").out);
  const auto r = run_ropekit("list encodings --verbose --format csv");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv(r.out);
  CHECK(t.columns == std::vector<std::string>{"spelling", "aliases", "operator", "features", "keys", "example"});
  REQUIRE(t.rows.size() == plain.rows.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    CAPTURE(row[0]);
    CHECK(std::equal(plain.rows[i].begin(), plain.rows[i].end(), row.begin()));
    CHECK(!row[4].empty());
    // The example is of this line's family and parses.
    const std::string family = row[0].substr(0, row[0].find(':'));
    CHECK(row[5].substr(0, row[5].find_first_of(":(")) == family);
    CHECK_NOTHROW(ropekit::parse_encoding(row[5]));
  }
  // The rope line names the schedule's keys and where the schemes are listed.
  CHECK(t.rows[0][4].find("dim: even integer") != std::string::npos);
  CHECK(t.rows[0][4].find("ropekit list schemes") != std::string::npos);
  // --verbose belongs to encodings only.
  const auto bad = run_ropekit("list methods --verbose");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--verbose") != std::string::npos);
}
