// `ropekit lie build|check|kernel` and `ropekit jordan positionwise` as a user meets them: verdicts in the
// JSON report, the CSV columns, and bad input as one `error: ...` line, exit 2 and no output file.
#include <doctest/doctest.h>

#include <array>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "reports/table.hpp"
#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;

namespace {

nlohmann::json check_json(const std::string& file, const std::string& extra = "") {
  const auto r = run_ropekit("lie check '" + file + "' --window 8" + extra);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

void expect_bad_input(const std::string& args, const std::string& out_file, const std::string& mentions) {
  CAPTURE(args);
  const auto r = run_ropekit(args);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  CHECK(r.err.find(mentions) != std::string::npos);
  CHECK(r.out.empty());
  CHECK_FALSE(std::filesystem::exists(out_file));
}

}  // namespace

TEST_CASE("lie build then lie check: verdicts for axial, mixed + Cayley, random and proportional generators") {
  ScratchDir dir("lie-cli");
  const std::string axial = dir.file("axial.json"), mixed = dir.file("mixed.json"), random = dir.file("random.json"),
                    prop = dir.file("prop.json");
  REQUIRE(run_ropekit("lie build axial --dim 16 --axes 2 --out '" + axial + "'").exit_code == 0);
  REQUIRE(run_ropekit("lie build mixed --dim 16 --axes 2 --seed 3 --mix cayley --out '" + mixed + "'").exit_code == 0);
  REQUIRE(run_ropekit("lie build random --dim 6 --axes 2 --seed 5 --out '" + random + "'").exit_code == 0);
  // Proportional: axis 1's frequencies are twice axis 0's.
  REQUIRE(run_ropekit("lie build torus --dim 4 --axes 2 --freqs 1,0.1,2,0.2 --out '" + prop + "'").exit_code == 0);

  const auto a = check_json(axial);
  for (const char* key : {"skew_defect", "max_commutator", "rank", "relativity_defect", "min_position_distance"})
    CHECK_MESSAGE(a.contains(key), key);
  for (const char* key : {"skew", "commuting", "independent", "relativity", "reversibility"}) {
    CAPTURE(key);
    CHECK(a[key] == true);
  }
  CHECK(a["rank"] == 2);

  const auto m = check_json(mixed);
  CHECK(m["orthogonal"] == true);
  CHECK(m["commuting"] == true);
  CHECK(m["relativity"] == true);
  CHECK(m["det_q"].get<double>() == doctest::Approx(1.0).epsilon(1e-13));

  const auto r = check_json(random);
  CHECK(r["commuting"] == false);
  CHECK(r["relativity"] == false);

  const auto p = check_json(prop);
  CHECK(p["rank"] == 1);
  CHECK(p["independent"] == false);
  CHECK(p["reversibility"] == false);
  CHECK(p["relativity"] == true);

  const auto md = run_ropekit("lie check '" + axial + "' --window 8 --format md");
  CHECK(md.exit_code == 0);
  CHECK(md.out.find("| relativity | yes |") != std::string::npos);

  const auto k = run_ropekit("lie kernel '" + axial + "' --offsets 0,1");
  CHECK(k.exit_code == 0);
  CHECK(k.out.rfind("dx0,dx1,phi\n0,0,1\n", 0) == 0);
}

TEST_CASE("jordan positionwise: one row per variant and factorization with the documented columns") {
  const auto r = run_ropekit("jordan positionwise --m 3 --c 1 --eta 0.1 --window 2048 --samples 33 --format csv");
  REQUIRE(r.exit_code == 0);
  const auto csv = ropekit::parse_csv(r.out, "stdout");
  for (const char* col : {"variant", "m", "window", "factorization", "max_query_factor", "max_key_factor",
                          "relativity_defect", "f32_score_error"})
    CHECK_MESSAGE(std::find(csv.columns.begin(), csv.columns.end(), col) != csv.columns.end(), col);
  REQUIRE(csv.rows.size() == 6);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"raw", "plain"}, {"raw", "centred"}, {"scaled", "plain"},
      {"scaled", "centred"}, {"stabilized", "plain"}, {"stabilized", "centred"}};
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(csv.rows[i][0] == expected[i].first);
    CHECK(csv.rows[i][3] == expected[i].second);
    CHECK(csv.rows[i][1] == "3");
    CHECK(csv.rows[i][2] == "2048");
  }
  CHECK(run_ropekit("jordan positionwise --m 2 --window 64 --center 10 --samples 9").exit_code == 0);
}

TEST_CASE("bad input: error: ..., exit 2, no output file") {
  ScratchDir dir("lie-bad");
  const std::string out = dir.file("out.json");
  // {file name, content, what the message must mention}
  const std::vector<std::array<std::string, 3>> files = {
      {"nonsquare.json", R"({"dimension": 2, "generators": [[[0, 1, 2], [1, 0, 2]]]})", "generators[0][0] length = 3"},
      {"ragged.json", R"({"dimension": 2, "generators": [[[0, 1], [1]]]})", "generators[0][1] length = 1"},
      {"mismatch.json", R"({"dimension": 2, "generators": [[[0, 1], [1, 0]], [[0]]]})",
       "generators[1] rows = 1 (must be 2"},
      {"nan.json", R"({"dimension": 2, "generators": [[[0, NaN], [1, 0]]]})", "NaN (must be a finite number"},
      {"malformed.json", R"({"dimension": 2, "generators": [[[0, 1], )", "malformed JSON"},
  };
  for (const auto& [name, text, mentions] : files)
    expect_bad_input("lie check '" + dir.write(name, text) + "' --out '" + out + "'", out, mentions);
  expect_bad_input("lie check '" + dir.file("missing.json") + "' --out '" + out + "'", out, "(must be a readable file: No such file or directory)");
  expect_bad_input("lie build torus --dim 7 --axes 1 --out '" + out + "'", out, "--dim = 7");
  expect_bad_input("lie build axial --dim 7 --axes 1 --out '" + out + "'", out, "dim = 7");
  expect_bad_input("lie build torus --dim 4 --axes 2 --freqs 1,2,3 --out '" + out + "'", out, "--freqs = 3 values");
  expect_bad_input("lie build axial --dim 8 --scale 2 --out '" + out + "'", out, "--scale");
  expect_bad_input("lie build axial --dim 8 --mix householder --out '" + out + "'", out, "mix = 'householder'");
  const std::string good = dir.file("good.json");
  REQUIRE(run_ropekit("lie build axial --dim 8 --out '" + good + "'").exit_code == 0);
  expect_bad_input("lie check '" + good + "' --window 1 --out '" + out + "'", out, "window = 1");
  expect_bad_input("lie check '" + good + "' --format csv --out '" + out + "'", out, "--format = 'csv'");
  const std::string csv = dir.file("pw.csv");
  expect_bad_input("jordan positionwise --m 0 --out '" + csv + "'", csv, "m = 0");
  expect_bad_input("jordan positionwise --window 1 --out '" + csv + "'", csv, "window = 1");
  expect_bad_input("jordan positionwise --eta nan --out '" + csv + "'", csv, "eta = nan");
  expect_bad_input("jordan positionwise --center left --out '" + csv + "'", csv, "--center = 'left'");
}

TEST_CASE("the built-in probes nd-rope and jordan-positionwise write their reports") {
  ScratchDir dir("lie-probes");
  const auto r = run_ropekit("probe nd-rope jordan-positionwise --out-dir '" + dir.path().string() + "'");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const char* f : {"nd-rope.md", "nd-rope.csv", "jordan-positionwise.md", "jordan-positionwise.csv"}) {
    CAPTURE(f);
    CHECK(std::filesystem::file_size(dir.path() / f) > 0);
  }
  const std::string md = ropekit::test::slurp(dir.file("nd-rope.md"));
  CHECK(md.find("- command: `ropekit probe nd-rope jordan-positionwise") != std::string::npos);
  CHECK(md.find("| proportional (B_1 = 2 B_0) |") != std::string::npos);
}
