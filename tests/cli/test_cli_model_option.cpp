// --model FILE[:LAYER_TYPE] in the commands beyond kernel, frequencies and check (features, fit, fit-params, design
// kernel:, verify content), and the masked lags of `kernel --model` for a layer type with a window. The expectation
// is always the same command given the spelling Gemma 3 4B's published config.json gives (as `ropekit model`
// prints it), and the window from the same file (sliding_window = 1024: lags 0..1023 visible).

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "svg_support.hpp"

using namespace ropekit::test;

namespace {

const std::string kSliding = "rope:dim=256,base=10000,F=128";
const std::string kFull = "rope:dim=256,base=1000000,F=128,scaling=linear(factor=8)";

std::string gemma() { return source_path("data/models/gemma-3-4b.json"); }

// `ropekit ARGS` (a --model form) and `ropekit SPELLED` (its encodings spelled out), both required to succeed.
std::pair<CliResult, CliResult> run_both(const std::string& args, const std::string& spelled) {
  auto m = run_ropekit(args);
  auto s = run_ropekit(spelled);
  CAPTURE(args);
  CAPTURE(m.err);
  REQUIRE(m.exit_code == 0);
  REQUIRE(s.exit_code == 0);
  return {std::move(m), std::move(s)};
}

// `ropekit ARGS` succeeds and prints what `ropekit SPELLED` prints.
void check_same(const std::string& args, const std::string& spelled) {
  const auto [m, s] = run_both(args, spelled);
  CHECK(!m.out.empty());
  CHECK(m.out == s.out);
}

// A multi-type file without :LAYER_TYPE and an unknown type are refused (exit 2, one line, nothing written).
void check_refusals(const std::string& command) {
  check_rejected(command + " --model '" + gemma() + "'",
                 "--model = '" + gemma() + "' (must be a file and a layer type, " + gemma() +
                     ":<layer type>, where the layer types' encodings differ (layer types: sliding_attention, "
                     "full_attention))");
  check_rejected(command + " --model '" + gemma() + ":global'",
                 "--model = '" + gemma() + ":global' (must be a layer type of the model: one of sliding_attention, "
                 "full_attention)");
}

// `kernel --model ...` (JSON) row by row against `kernel --encoding ...` (JSON) of the same spellings and lags: each
// row led by its layer type, and equal to the spelled row except that a masked row's values are null.
void check_masked(const std::string& model_args, const std::string& spelled_args,
                  const std::vector<std::string>& layer_types, const std::vector<bool>& masked) {
  const auto m = run_ropekit("kernel " + model_args + " --format json");
  const auto s = run_ropekit("kernel " + spelled_args + " --format json");
  CAPTURE(model_args);
  CAPTURE(m.err);
  REQUIRE(m.exit_code == 0);
  REQUIRE(s.exit_code == 0);
  const auto rows = nlohmann::json::parse(m.out), spelled = nlohmann::json::parse(s.out);
  REQUIRE(rows.size() == layer_types.size());
  REQUIRE(spelled.size() == layer_types.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(rows[i]["layer_type"] == layer_types[i]);
    CHECK(rows[i].size() == spelled[i].size() + 1);
    for (const auto& [key, value] : spelled[i].items()) {
      CAPTURE(key);
      if (masked[i] && key != "encoding" && key != "lag") CHECK(rows[i][key].is_null());
      else CHECK(rows[i][key] == value);
    }
  }
}

}  // namespace

// `ropekit ARGS` succeeds and prints what `ropekit SPELLED` prints with a first column layer_type: `labels`, one per
// row after the header.
void check_same_labelled(const std::string& args, const std::string& spelled, const std::vector<std::string>& labels) {
  const auto [m, s] = run_both(args, spelled);
  CAPTURE(args);
  std::string expected;
  std::size_t line = 0;
  for (std::size_t at = 0, end; (end = s.out.find('\n', at)) != std::string::npos; at = end + 1, ++line)
    expected += (line == 0 ? std::string("layer_type") : labels.at(line - 1)) + "," + s.out.substr(at, end + 1 - at);
  CHECK(line == labels.size() + 1);
  CHECK(m.out == expected);
}

TEST_CASE("features --model: a layer type's feature columns, as its spelling's, led by a layer_type column") {
  check_same_labelled("features --model '" + gemma() + ":sliding_attention' --lags 0:4",
                      "features --encoding '" + kSliding + "' --lags 0:4", std::vector<std::string>(4, "sliding_attention"));
  check_refusals("features --lags 0:4");
  check_rejected("features --model '" + gemma() + ":sliding_attention' --encoding rope --lags 0:4",
                 "--encoding excludes --model");
  // --encoding alone keeps its columns.
  CHECK(run_ropekit("features --encoding rope:dim=4 --lags 0:2").out.rfind("lag,1,", 0) == 0);
}

TEST_CASE("fit --model: every layer type of a file, or one, fitted as their spellings, rows led by the layer type") {
  const std::string run = " --train-context 32 --eval-contexts 64 --targets phase";
  check_same_labelled("fit --model '" + gemma() + "'" + run,
                      "fit --encoding '" + kSliding + "' --encoding '" + kFull + "'" + run,
                      {"sliding_attention", "sliding_attention", "full_attention", "full_attention"});
  check_same_labelled("fit --model '" + gemma() + ":full_attention'" + run, "fit --encoding '" + kFull + "'" + run,
                      {"full_attention", "full_attention"});
  check_rejected("fit --model '" + gemma() + ":global'" + run, "(must be a layer type of the model: one of");
}

TEST_CASE("fit --model: a sliding layer trains and is scored on the lags its window shows, said in a note") {
  // Gemma 3's sliding window is 1024: L = 2048 and T = 4096 ask for lags it never sees; its rows are those of a run
  // on lags 0..1023 (L = T = 1024), with the lengths asked kept in `context`.
  const auto m = run_ropekit("fit --model '" + gemma() + ":sliding_attention' --train-context 2048 --eval-contexts "
                             "4096 --targets phase --format json");
  const auto w = run_ropekit("fit --encoding '" + kSliding + "' --train-context 1024 --eval-contexts 1024 --targets "
                             "phase --format json");
  CAPTURE(m.err);
  REQUIRE(m.exit_code == 0);
  REQUIRE(w.exit_code == 0);
  CHECK(m.err.find("ropekit fit: note: sliding_attention: sliding 1024 hides |lag| >= 1024: trained on lags 0..1023 "
                   "and scored on lags 0..min(T, 1024)-1 only") != std::string::npos);
  const auto rows = nlohmann::json::parse(m.out), seen = nlohmann::json::parse(w.out);
  REQUIRE(rows.size() == 2);
  REQUIRE(seen.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(rows[i]["layer_type"] == "sliding_attention");
    CHECK(rows[i]["n_train"] == 1024);
    CHECK(rows[i]["mse"] == seen[i]["mse"]);
    CHECK(rows[i]["r2"] == seen[i]["r2"]);
  }
  CHECK(rows[0]["context"] == 2048);
  CHECK(rows[1]["context"] == 4096);
}

TEST_CASE("fit --model: Llama 4's query temperature is not applied, said in a note") {
  // Scout's full_attention layers are NoPE (nope:dim=128, as `ropekit model` reads the file) with
  // attn_temperature_tuning: the fit is the spelling's, and a note says s(p) is left out.
  const std::string scout = source_path("data/models/llama-4-scout.json");
  const std::string run = " --train-context 32 --eval-contexts 64 --targets phase";
  check_same_labelled("fit --model '" + scout + ":full_attention'" + run, "fit --encoding nope:dim=128" + run,
                      {"full_attention", "full_attention"});
  const auto m = run_ropekit("fit --model '" + scout + ":full_attention'" + run);
  CHECK(m.err.find("ropekit fit: note: full_attention: the query temperature s(p) = 0.1 ln(1 + floor((p + 1)/8192)) + "
                   "1 is not applied: fitted on the encoding's own features") != std::string::npos);
  CHECK(run_ropekit("fit --model '" + gemma() + ":full_attention'" + run).err.find("query temperature") ==
        std::string::npos);
}

TEST_CASE("verify content --model: lags a sliding layer never sees are masked (empty), the others checked") {
  // Rows of --lags 1,1024,5 against the spelling's run on the lags the window shows (1, 5): the same numbers (the
  // content draws do not depend on the other lags, and the Bonferroni count is the lags checked), the masked row
  // null but for its lag.
  const std::string trials = " --trials 1000 --format json";
  const auto [m, s] = run_both("verify content --model '" + gemma() + ":sliding_attention' --lags 1,1024,5" + trials,
                               "verify content --encoding '" + kSliding + "' --lags 1,5" + trials);
  const auto rows = nlohmann::json::parse(m.out), seen = nlohmann::json::parse(s.out);
  REQUIRE(rows.size() == 3);
  REQUIRE(seen.size() == 2);
  CHECK(rows[0] == seen[0]);
  CHECK(rows[2] == seen[1]);
  CHECK(rows[1]["lag"] == 1024);
  for (const auto& [key, value] : rows[1].items())
    if (key != "lag") CHECK(value.is_null());
  CHECK(m.err.find("ropekit verify content: note: sliding_attention: sliding 1024 hides |lag| >= 1024: 1 lag(s) "
                   "masked (empty cells, null in JSON), not checked") != std::string::npos);
  CHECK(m.err.find("PASS (2 lags") != std::string::npos);
  // Every lag hidden: nothing to check, refused.
  check_rejected("verify content --model '" + gemma() + ":sliding_attention' --lags 1024,5000 --trials 100",
                 "ropekit verify content: --lags = '1024,5000' (must be lags sliding_attention sees (sliding 1024 "
                 "hides |lag| >= 1024))");
}

TEST_CASE("check --model: rows led by the layer type; a window's lags are those the layer sees") {
  const auto c = run_ropekit("check --model '" + gemma() + "' --window 0,10,2000 --format json");
  CAPTURE(c.err);
  REQUIRE(c.exit_code == 0);
  std::vector<double> sliding_lags, full_lags;
  for (const auto& row : nlohmann::json::parse(c.out)) {
    REQUIRE(row.contains("layer_type"));
    if (row["quantity"] != "long_term_decay_bound") continue;
    (row["layer_type"] == "sliding_attention" ? sliding_lags : full_lags).push_back(row["lag"].get<double>());
  }
  CHECK(sliding_lags == std::vector<double>{0, 10});
  CHECK(full_lags == std::vector<double>{0, 10, 2000});
  CHECK(c.err.find("sliding_attention: sliding 1024 hides |lag| >= 1024: checked on the 2 window lag(s) it sees") !=
        std::string::npos);
  check_rejected("check --model '" + gemma() + ":sliding_attention' --window 1024,5000",
                 "--window = '1024,5000' (must be lags sliding_attention sees (sliding 1024 hides |lag| >= 1024))");
  // --encoding alone keeps its columns.
  CHECK(run_ropekit("check --encoding rope:dim=8").out.rfind("encoding,quantity,lag,value\n", 0) == 0);
}

TEST_CASE("fit-params --model: the encoding of one layer type is tuned") {
  const std::string run = " --free theta --targets phase --train-context 32 --eval-contexts 64 --starts 1 "
                          "--max-iterations 2 --format csv";
  check_same("fit-params --model '" + gemma() + ":sliding_attention'" + run,
             "fit-params --encoding '" + kSliding + "'" + run);
  check_refusals("fit-params" + run);
  check_rejected("fit-params --model '" + gemma() + ":sliding_attention' --encoding rope" + run,
                 "--encoding excludes --model");
}

TEST_CASE("design --model: the target kernel:ENCODING of one layer type") {
  const std::string run = " --blocks 8 --lags 0:129 --format csv";
  check_same("design --model '" + gemma() + ":full_attention'" + run, "design --kernel 'kernel:" + kFull + "'" + run);
  check_refusals("design" + run);
  check_rejected("design --model '" + gemma() + ":full_attention' --kernel gaussian:sigma=1" + run,
                 "--kernel excludes --model");
  check_rejected("design" + run, "ropekit design: --kernel = none (must be given, or --model)");
}

TEST_CASE("verify content --model: one layer type's content moments, as its spelling's") {
  const std::string run = " --trials 1000 --lags 0,1,10";
  check_same("verify content --model '" + gemma() + ":sliding_attention'" + run,
             "verify content --encoding '" + kSliding + "'" + run);
  check_refusals("verify content" + run);
  check_rejected("verify content" + run, "ropekit verify content: --encoding = none (must be given, or --model)");
}

TEST_CASE("kernel --model: lags a sliding window hides are masked, the rest are the spelling's kernel") {
  const std::string lags = " --lags 0,1023,1024,-1024,5000";
  // Sliding layers see lags 0 and 1023 (|lag| < 1024); 1024, -1024 and 5000 are masked. Full layers see every lag.
  const std::vector<std::string> types = {"sliding_attention", "sliding_attention", "sliding_attention",
                                          "sliding_attention", "sliding_attention", "full_attention",
                                          "full_attention",    "full_attention",    "full_attention",
                                          "full_attention"};
  check_masked("--model '" + gemma() + "'" + lags, "--encoding '" + kSliding + "' --encoding '" + kFull + "'" + lags,
               types, {false, false, true, true, true, false, false, false, false, false});
  // One layer type alone: plain RoPE's extra columns are masked too.
  check_masked("--model '" + gemma() + ":sliding_attention'" + lags, "--encoding '" + kSliding + "'" + lags,
               std::vector<std::string>(5, "sliding_attention"), {false, false, true, true, true});
  const auto r = run_ropekit("kernel --model '" + gemma() + "'" + lags);
  CHECK(r.err.find("note: sliding_attention: sliding 1024 hides |lag| >= 1024: masked there") != std::string::npos);
  // CSV: the masked cells are empty.
  const auto csv = run_ropekit("kernel --model '" + gemma() + "' --lags 1024");
  CHECK(csv.out.rfind("layer_type,encoding,lag,kernel,content_variance,expected_kernel,frequency_variance,"
                      "sine_residual,continuum,continuum_sine\n"
                      "sliding_attention,\"" + kSliding + "\",1024,,,,,,,\nfull_attention,",
                      0) == 0);
  // Without masked lags there is no note; --encoding alone keeps its columns (no layer_type).
  CHECK(run_ropekit("kernel --model '" + gemma() + "' --lags 0,1023").err.empty());
  CHECK(run_ropekit("kernel --encoding '" + kSliding + "' --lags 1024").out.rfind("encoding,lag,", 0) == 0);
}

TEST_CASE("kernel --model: a chunked window, and layer types that share an encoding but not a window") {
  ScratchDir dir("model-window");
  // Llama 4's structure in small: chunked RoPE layers (chunks of 16 positions) and a NoPE full layer.
  const std::string chunked = dir.write("chunked.json", R"({"model_type": "llama4_text", "head_dim": 8,
    "num_hidden_layers": 4, "attention_chunk_size": 16, "rope_theta": 500000, "no_rope_layers": [1, 1, 1, 0],
    "layer_types": ["chunked_attention", "chunked_attention", "chunked_attention", "full_attention"]})");
  check_masked("--model '" + chunked + "' --lags 15,16",
               "--encoding 'rope:dim=8,base=500000,F=4' --encoding 'nope:dim=8' --lags 15,16",
               {"chunked_attention", "chunked_attention", "full_attention", "full_attention"},
               {false, true, false, false});
  // gpt-oss's structure: sliding and full layers with one encoding. Commands of one encoding take the file alone;
  // kernel prints both layer types, the window masking only the sliding one's rows.
  const std::string shared = dir.write("shared.json", R"({"head_dim": 8, "num_hidden_layers": 2, "sliding_window": 4,
    "rope_theta": 10000, "layer_types": ["sliding_attention", "full_attention"]})");
  check_same("frequencies --model '" + shared + "'", "frequencies --encoding 'rope:dim=8,base=10000,F=4'");
  const std::string rope = "'rope:dim=8,base=10000,F=4'";
  check_masked("--model '" + shared + "' --lags 3,4", "--encoding " + rope + " --encoding " + rope + " --lags 3,4",
               {"sliding_attention", "sliding_attention", "full_attention", "full_attention"},
               {false, true, false, false});
}

TEST_CASE("kernel --model --plot: the lags each layer type sees, refused where its window masks every lag") {
  ScratchDir dir("model-plot");
  const std::string svg = dir.file("k.svg"), csv = dir.file("k.csv");
  const auto r = run_ropekit("kernel --model '" + gemma() + "' --lags 1000:1100:10 --plot '" + svg + "' --out '" + csv + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string plot = slurp(svg);
  // Lags 1000..1020 are seen by both layer types, 1030.. by the full layers only: both series, labelled by the
  // file's name and the layer type (issue 32: the spelling made the legend run off the figure).
  CHECK(plot.find(">gemma-3-4b.json: sliding_attention<") != std::string::npos);
  CHECK(plot.find(">gemma-3-4b.json: full_attention<") != std::string::npos);
  // The sliding curve ends at its window: no column of it past lag 1023 (drawn columns' mean x are lags it sees).
  const auto frame = svg_elements(plot, "<rect class=\"frame\"").at(0);
  const double x0 = svg_number(frame, "x"), w = svg_number(frame, "width");
  const auto groups = svg_elements(plot, "<g class=\"series\"");
  REQUIRE(svg_attr(groups.at(0), "data-label") == "gemma-3-4b.json: sliding_attention");  // a panel's first curve
  const auto mean = svg_path(svg_attr(svg_elements(plot, "<path class=\"mean\"").at(0), "d"));
  REQUIRE_FALSE(mean.points.empty());
  CHECK(std::abs(mean.points.back().first - (x0 + w * (1020.0 - 1000) / 90)) <= 0.051);  // linear axis 1000..1090
  // Lags past the window only: the sliding series is left out of the plot; with it alone, nothing to plot.
  REQUIRE(run_ropekit("kernel --model '" + gemma() + "' --lags 2000:2010 --plot '" + svg + "' --out '" + csv + "'")
              .exit_code == 0);
  CHECK(slurp(svg).find("sliding_attention") == std::string::npos);
  check_rejected("kernel --model '" + gemma() + ":sliding_attention' --lags 2000:2010 --plot '" + dir.file("x.svg") + "'",
                 "--plot = " + dir.file("x.svg") + " (must be given with lags some layer type sees (its window masks "
                 "every lag here))");
  CHECK_FALSE(std::filesystem::exists(dir.file("x.svg")));
}

TEST_CASE("kernel --model: Llama 4's NoPE layers scale the score by s(p), at p = |lag| or --position") {
  // models.md section 4: s(p) = 0.1 ln(1 + floor((p + 1)/8192)) + 1 is 1.0 / 1.0693 / 1.2197 / 1.4860 at
  // p = 8190 / 8191 / 65536 / 1048576; written out here. NoPE's own kernel is 1 and its content variance the 128-dim
  // head's, ||G||_F^2 + rho^2 tr G^2 = 2 x 128 for G = I_128 and rho = 1 (a rope layer's at lag 0, G = I too).
  auto s = [](double p) { return 0.1 * std::log1p(std::floor((p + 1) / 8192)) + 1; };
  const std::string scout = source_path("data/models/llama-4-scout.json");
  const auto r = run_ropekit("kernel --model '" + scout + ":full_attention' --lags 8190,8191,65536,1048576 --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 4);
  const double printed[] = {1.0, 1.0693, 1.2197, 1.4860};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double p = rows[i]["lag"].get<double>(), k = rows[i]["kernel"].get<double>();
    CAPTURE(p);
    CHECK(k == doctest::Approx(s(p)).epsilon(1e-15));
    CHECK(std::abs(k - printed[i]) < 5e-5);
    CHECK(rows[i]["content_variance"].get<double>() == doctest::Approx(2 * 128 * s(p) * s(p)).epsilon(1e-15));
  }
  CHECK(r.err.find("scaled by s(p)") != std::string::npos);
  // --position fixes the query position for every lag.
  const auto at = run_ropekit("kernel --model '" + scout + ":full_attention' --lags 1,5 --position 65536 --format json");
  REQUIRE(at.exit_code == 0);
  for (const auto& row : nlohmann::json::parse(at.out)) CHECK(row["kernel"].get<double>() == doctest::Approx(s(65536)));
  check_rejected("kernel --model '" + scout + ":full_attention' --lags 1 --position -1",
                 "position = -1 (must be a query position >= 0)");
}
