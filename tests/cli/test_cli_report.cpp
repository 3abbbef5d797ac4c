// ropekit report FILE...: the Markdown page and its SVGs beside --out, the self-contained HTML page, Markdown on
// stdout without plots, a folder's config.json, and refusals (exit 2, one line, nothing written). The numbers are
// checked in tests/models/test_model_report.cpp; the HTML page in a browser in python/tests/test_report.py.

#include <doctest/doctest.h>

#include <filesystem>

#include "support.hpp"

using namespace ropekit::test;

namespace {

const std::string kThree = "'" + source_path("data/models/llama-3.1-8b.json") + "' '" +
                           source_path("data/models/gemma-3-4b.json") + "' '" +
                           source_path("data/models/qwen2.5-7b-yarn.json") + "'";

}  // namespace

TEST_CASE("ropekit report: three configs to Markdown, one SVG per file beside it") {
  ScratchDir dir("report-md");
  const auto r = run_ropekit("report " + kThree + " --out '" + dir.file("models.md") + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  const std::string md = slurp(dir.file("models.md"));
  for (const char* svg : {"models-1.svg", "models-2.svg", "models-3.svg"}) {
    CAPTURE(svg);
    CHECK(md.find(std::string("](") + svg + ")") != std::string::npos);
    const std::string text = slurp(dir.file(svg));
    CHECK(text.rfind("<svg", 0) == 0);
    CHECK(text.find("<path") != std::string::npos);  // the curve
  }
  // Legends and titles name a file by its name, never the (here absolute) path given on the command line.
  const std::string one = slurp(dir.file("models-1.svg"));
  CHECK(one.find("llama-3.1-8b.json") != std::string::npos);
  CHECK(one.find(source_path("data/models")) == std::string::npos);
  // The side-by-side table: one column per file; the three models' values as `ropekit probe models` reports them.
  CHECK(md.find("| quantity | 1: ") != std::string::npos);
  CHECK(md.find("| layer types | full_attention x 32 | sliding_attention x 29; full_attention x 5 | full_attention x 28 |") !=
        std::string::npos);
  CHECK(md.find("| visible lags | 131071 | sliding_attention: 1023; full_attention: 131071 | 131071 |") !=
        std::string::npos);
  CHECK(md.find("huggingface, bf16 (torch_dtype = bfloat16)") != std::string::npos);
  CHECK(md.find("| 2 | sliding_attention | 29 | 256 | 256 | 10000 |") != std::string::npos);
  CHECK(md.find("## 4. Precision") != std::string::npos);
  CHECK(md.find("llama.cpp (ggml's YaRN ramp)") != std::string::npos);
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 4);
}

TEST_CASE("ropekit report: --format html is one self-contained page") {
  ScratchDir dir("report-html");
  const auto r = run_ropekit("report " + kThree + " --format html --out '" + dir.file("models.html") + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string html = slurp(dir.file("models.html"));
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  std::size_t svgs = 0;
  for (std::size_t at = 0; (at = html.find("<svg", at)) != std::string::npos; ++at) ++svgs;
  CHECK(svgs == 3);
  // No external resource, no script: nothing fetched (the SVG namespace is a name, not a fetch).
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  for (std::size_t at = 0; (at = html.find("url(", at)) != std::string::npos; ++at)
    CHECK(html.compare(at, 5, "url(#") == 0);  // a clip path of the page itself
  // Each plot's ids (its clip paths) are its own: "panel0" once per plot, prefixed.
  CHECK(html.find("id=\"panel0\"") == std::string::npos);
  CHECK(html.find("id=\"plot3-panel0\"") != std::string::npos);
  CHECK(html.find("url(#plot3-panel0)") != std::string::npos);
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);  // no SVG files beside it
}

TEST_CASE("ropekit report: Markdown on stdout or with --no-plots writes no SVG; a folder reads its config.json") {
  ScratchDir dir("report-stdout");
  std::filesystem::create_directory(dir.path() / "Llama-2-7b");
  std::filesystem::copy_file(source_path("data/models/llama-2-7b.json"), dir.path() / "Llama-2-7b" / "config.json");
  const auto r = run_ropekit("report '" + dir.file("Llama-2-7b") + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Llama-2-7b/config.json") != std::string::npos);
  CHECK(r.out.find("No plots: Markdown on standard output") != std::string::npos);
  CHECK(r.out.find(".svg)") == std::string::npos);
  const auto n = run_ropekit("report '" + dir.file("Llama-2-7b") + "' --no-plots --out '" + dir.file("r.md") + "'");
  CHECK(n.exit_code == 0);
  CHECK(std::filesystem::exists(dir.file("r.md")));
  CHECK_FALSE(std::filesystem::exists(dir.file("r-1.svg")));
}

TEST_CASE("ropekit report: bad input is refused in one line, nothing written") {
  ScratchDir dir("report-refused");
  check_rejected("report", "ropekit report: FILE = none (must be at least one model file");
  check_rejected("report '" + dir.file("missing.json") + "'", "FILE = '" + dir.file("missing.json") + "' (must be an existing");
  std::filesystem::create_directory(dir.path() / "empty");
  check_rejected("report '" + dir.file("empty") + "'", "(must be a model file or a folder holding a config.json");
  const std::string bad = dir.write("bad.json", "{\"rope_theta\": ");
  check_rejected("report '" + bad + "'", "ropekit report: " + bad + ": not JSON");
  check_rejected("report " + kThree + " --format pdf", "ropekit report: --format = 'pdf' (must be md or html)");
  check_rejected("report " + kThree + " --tolerance 0", "ropekit report: --tolerance = 0 (must be finite and > 0)");
  check_rejected("report " + kThree + " --tolerance inf", "ropekit report: --tolerance = inf (must be finite and > 0)");
  // A context of 2e9 lags: refused before hours of scanning, with the estimate.
  const std::string huge = dir.write("huge.json", R"({"model_type": "llama", "head_dim": 128, "num_attention_heads": 1,
    "num_hidden_layers": 1, "rope_theta": 500000.0, "max_position_embeddings": 2000000000})");
  check_rejected("report '" + huge + "'", "' (must be a model whose layers' visible lags can be scanned within the time cap: "
                                          "this one would take about");
  // A good file beside a bad one: the good one's page is not written either.
  const std::string out = dir.file("partial.md");
  const auto r = run_ropekit("report '" + source_path("data/models/llama-2-7b.json") + "' '" + bad + "' --out '" + out + "'");
  CHECK(r.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_FALSE(std::filesystem::exists(dir.file("partial-1.svg")));
}
