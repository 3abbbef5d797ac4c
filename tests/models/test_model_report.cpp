// The models report's numbers (models/model_report.hpp) against routes written here: the kernel of plain RoPE as
// the mean of cos(m theta_i) summed with std::cos, its minimum and first negative lag by a scan of every lag, the
// window's visible lags, wavelength coverage by counting, the base bound's grid neighbours, the first precision
// position by evaluating every position in float arithmetic, and the dtype each file's precision runs in.

#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "ropekit/core/error.hpp"
#include "ropekit/models/hf_config.hpp"
#include "ropekit/commands/model_report.hpp"
#include "support.hpp"

using namespace ropekit;
using namespace ropekit::test;

namespace {

// Phi(m) of rope:dim=n,base=B with every pair rotated: the mean of cos(m theta_i), theta_i = B^(-2i/n) by exp/log.
double phi(double base, int n, double m) {
  double sum = 0;
  for (int i = 0; i < n / 2; ++i) sum += std::cos(m * std::exp(-(2.0 * i / n) * std::log(base)));
  return sum / (n / 2);
}

Model config(const std::string& json) { return read_hf_config(json, "config.json"); }

}  // namespace

TEST_CASE("model report: a plain RoPE layer's kernel, minimum, first negative lag and coverage by direct sums") {
  const Model m = config(R"({"model_type": "llama", "head_dim": 8, "num_attention_heads": 1, "num_hidden_layers": 2,
    "rope_theta": 50.0, "max_position_embeddings": 300})");
  const ModelReport r = model_report(m);
  REQUIRE(r.layers.size() == 1);
  const LayerReport& l = r.layers[0];
  CHECK(l.rotary);
  CHECK(l.context == 300);
  CHECK(l.visible_lags == 299);  // positions 0..299
  CHECK(l.base == 50);
  CHECK(l.pairs == 4);
  double min = 2;
  std::int64_t argmin = 0;
  std::optional<std::int64_t> first_negative;
  for (std::int64_t lag = 1; lag <= 299; ++lag) {
    const double v = phi(50, 8, static_cast<double>(lag));
    if (v < min) min = v, argmin = lag;
    if (v < 0 && !first_negative) first_negative = lag;
  }
  CHECK(l.min_kernel == doctest::Approx(min).epsilon(1e-12));
  CHECK(l.min_kernel_lag == argmin);
  REQUIRE(first_negative);
  CHECK(l.first_negative_lag == first_negative);
  // Turns: wavelengths 2 pi / theta_i = 2 pi 50^(2i/8) = 6.28, 16.7, 44.4, 118 all fit within 300.
  CHECK(l.turns_within_orig == 4);
  CHECK(l.turns_within_context == 4);
  // The table's lags 1, 16, 256 are visible, 4000 on are not; the plot runs from lag 1 to 299.
  REQUIRE(l.table_kernel.size() == model_report_table_lags().size());
  CHECK(*l.table_kernel[0] == doctest::Approx(phi(50, 8, 1)).epsilon(1e-12));
  CHECK(*l.table_kernel[2] == doctest::Approx(phi(50, 8, 256)).epsilon(1e-12));
  CHECK_FALSE(l.table_kernel[3]);
  CHECK(l.plot_lags.front() == 1);
  CHECK(l.plot_lags.back() == 299);
  for (std::size_t i = 0; i < l.plot_lags.size(); i += 20)
    CHECK(l.plot_kernel[i] == doctest::Approx(phi(50, 8, l.plot_lags[i])).epsilon(1e-12));
  // Men et al.'s bound on the 16-per-decade grid from 10: no negative lag there, one at the grid base below it.
  REQUIRE(l.base_bound);
  const auto neg_at = [](double base) {
    for (int lag = 1; lag <= 299; ++lag)
      if (phi(base, 8, lag) < -1e-12) return true;
    return false;
  };
  CHECK_FALSE(neg_at(*l.base_bound));
  CHECK(neg_at(*l.base_bound / std::pow(10.0, 1.0 / 16)));
  CHECK(*l.base_bound > 50);  // the file's base has a negative lag
  CHECK(l.precision.empty());  // none asked
}

TEST_CASE("model report: a sliding window of W shows lags < W; a NoPE layer has kernel 1") {
  const Model m = config(R"({"model_type": "mistral", "head_dim": 16, "num_attention_heads": 1,
    "num_hidden_layers": 4, "rope_theta": 10000.0, "max_position_embeddings": 32768, "sliding_window": 4096})");
  const ModelReport r = model_report(m);
  REQUIRE(r.layers.size() == 1);
  CHECK(r.layers[0].visible_lags == 4095);
  CHECK(r.layers[0].table_kernel[3]);         // lag 4000 < 4096
  CHECK_FALSE(r.layers[0].table_kernel[4]);   // lag 32000 hidden
  CHECK(r.layers[0].plot_lags.back() == 4095);

  const Model smol = config(R"({"model_type": "smollm3", "head_dim": 16, "num_attention_heads": 1,
    "num_hidden_layers": 4, "rope_theta": 10000.0, "max_position_embeddings": 1000, "no_rope_layers": [1, 1, 1, 0]})");
  const ModelReport s = model_report(smol);
  REQUIRE(s.layers.size() == 2);
  const LayerReport& nope = s.layers[0].rotary ? s.layers[1] : s.layers[0];
  CHECK_FALSE(nope.rotary);
  CHECK(nope.visible_lags == 999);
  CHECK(*nope.table_kernel[0] == 1);
  CHECK(nope.plot_lags.empty());
}

TEST_CASE("model report: the first position past a tolerance, against every position evaluated in float") {
  const Model m = config(R"({"model_type": "llama", "head_dim": 4, "num_attention_heads": 1, "num_hidden_layers": 1,
    "rope_theta": 100.0, "max_position_embeddings": 4096})");
  ModelReportOptions o;
  o.pipeline = Pipeline{};  // transformers, fp32
  o.tolerances = {1e-3};
  const ModelReport r = model_report(m, o);
  REQUIRE(r.layers[0].precision.size() == 1);
  const FirstPosition& f = r.layers[0].precision[0].phase;
  REQUIRE(f.position);
  // fp32: angle = fl32(fl32(p) theta32), theta32 = fl32 of 100^(-i/2) as torch computes it (1 and 0.1 here, rounded
  // to float); the error against p theta in long double, wrapped to [-pi, pi].
  const float theta32[2] = {1.0f, static_cast<float>(1.0 / std::pow(100.0L, 0.5L))};
  const long double exact[2] = {1.0L, 1.0L / std::pow(100.0L, 0.5L)};
  std::optional<double> first;
  for (std::int64_t p = 0; p < 2000000 && !first; ++p) {
    for (int i = 0; i < 2; ++i) {
      const float angle = static_cast<float>(p) * theta32[i];
      long double d = std::fmod(static_cast<long double>(angle) - static_cast<long double>(p) * exact[i],
                                2 * 3.14159265358979323846264338327950288L);
      if (d > 3.14159265358979323846264338327950288L) d -= 2 * 3.14159265358979323846264338327950288L;
      if (d < -3.14159265358979323846264338327950288L) d += 2 * 3.14159265358979323846264338327950288L;
      if (std::abs(d) > 1e-3L) first = static_cast<double>(p);
    }
  }
  REQUIRE(first);
  CHECK(*f.position == *first);
}

TEST_CASE("report files: the dtype from torch_dtype / dtype, bf16 when absent (said), a folder's config.json") {
  ScratchDir dir("report-dtype");
  const std::string keys = R"("model_type": "llama", "head_dim": 8, "num_attention_heads": 1, "num_hidden_layers": 1,
    "rope_theta": 10000.0, "max_position_embeddings": 512)";
  const std::string fp16 = dir.write("fp16.json", "{" + keys + R"(, "torch_dtype": "float16"})");
  const std::string t5 = dir.write("t5.json", "{" + keys + R"(, "dtype": "float32"})");
  const std::string none = dir.write("none.json", "{" + keys + "}");
  std::filesystem::create_directory(dir.path() / "folder");
  dir.write("folder/config.json", "{" + keys + R"(, "torch_dtype": "bfloat16"})");
  ReportRequest req;
  req.files = {fp16, t5, none, dir.file("folder")};
  const auto files = report_files(req);
  REQUIRE(files.size() == 4);
  CHECK(files[0].pipeline.dtype == Dtype::fp16);
  CHECK(files[0].dtype_source == "torch_dtype = float16");
  CHECK(files[1].pipeline.dtype == Dtype::fp32);
  CHECK(files[2].pipeline.dtype == Dtype::bf16);
  REQUIRE(files[2].dtype_notes.size() == 1);
  CHECK(files[2].dtype_notes[0].find("bf16") != std::string::npos);
  CHECK(files[3].path == dir.file("folder/config.json"));
  CHECK(files[3].pipeline.dtype == Dtype::bf16);
  CHECK(files[3].dtype_notes.empty());
  for (const auto& f : files) {
    REQUIRE(f.report.layers.size() == 1);
    CHECK(f.report.layers[0].precision.size() == 2);  // 1e-3 and 1e-2
  }
}

TEST_CASE("report files: refusals name FILE and the constraint") {
  ScratchDir dir("report-bad");
  auto refused = [](std::vector<std::string> files, const std::string& expect) {
    ReportRequest req;
    req.files = std::move(files);
    CAPTURE(expect);
    try {
      (void)report_files(req);
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(expect) != std::string::npos);
    }
  };
  refused({}, "ropekit report: FILE = none (must be at least one model file");
  refused({dir.file("missing.json")}, "ropekit report: FILE = '" + dir.file("missing.json") + "' (must be an existing");
  refused({dir.path().string()}, "(must be a model file or a folder holding a config.json");
  refused({dir.write("bad.json", "{\"a\": ")}, "ropekit report: " + dir.file("bad.json") + ": not JSON");
}

TEST_CASE("model report: ALiBi heads are not rotary (no kernel, base or bound), and the report still runs") {
  ReportRequest req;
  req.files = {source_path("data/models/bloom-560m.json")};
  const auto files = report_files(req);
  REQUIRE(files.size() == 1);
  REQUIRE_FALSE(files[0].report.layers.empty());
  for (const auto& l : files[0].report.layers) {
    CHECK_FALSE(l.rotary);
    CHECK(l.family == "alibi");
    CHECK_FALSE(l.base);
    CHECK(l.precision.empty());
    for (const auto& v : l.table_kernel) CHECK_FALSE(v);
  }
}

TEST_CASE("report files: a model without a context is refused naming the file and the key") {
  ScratchDir dir("report-context");
  ReportRequest req;
  req.files = {dir.write("config.json", R"({"model_type": "llama", "head_dim": 8, "num_attention_heads": 1,
    "num_hidden_layers": 1, "rope_theta": 10000.0})")};
  try {
    (void)report_files(req);
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("ropekit report: FILE = '" + req.files[0] +
                                     "' (must be a model with a context (max_position_embeddings; GGUF: context_length)") == 0);
  }
}

TEST_CASE("report files: a GGUF file runs through llama.cpp's pipeline in fp32, and agrees with its config.json") {
  // The corpus's Llama 3.1 GGUF (rope_freqs factors: explicit frequencies) against Meta's config.json (llama3).
  ReportRequest req;
  req.files = {source_path("tests/fuzz/corpus/gguf/seed-llama31"), source_path("data/models/llama-3.1-8b.json")};
  const auto files = report_files(req);
  REQUIRE(files.size() == 2);
  CHECK(files[0].pipeline.kind == PipelineKind::ggml);
  CHECK(files[0].pipeline.dtype == Dtype::fp32);
  CHECK(files[1].pipeline.kind == PipelineKind::huggingface);
  CHECK(files[1].pipeline.dtype == Dtype::bf16);  // torch_dtype = bfloat16
  const LayerReport &g = files[0].report.layers.at(0), &h = files[1].report.layers.at(0);
  CHECK_FALSE(g.base);  // explicit frequencies: no base, no bound
  CHECK_FALSE(g.base_bound);
  CHECK(g.precision.empty());  // ggml's pipeline does not model rope_freqs factors: said in the note
  CHECK(g.precision_note.find("not modelled") == 0);
  CHECK(g.visible_lags == h.visible_lags);
  CHECK(g.first_negative_lag == h.first_negative_lag);
  CHECK(g.min_kernel_lag == h.min_kernel_lag);
  CHECK(g.min_kernel == doctest::Approx(h.min_kernel).epsilon(1e-5));  // the factors are float32
}
