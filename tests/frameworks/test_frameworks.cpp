// ropekit frameworks: each framework's reading of a config.json against the formulas of its source, written here
// (get_mscale(s, m) = 0.1 m ln s + 1), and the public numbers of the bugs they caused: vLLM's YaRN without mscale for
// a Ministral 3-like config (vllm issue 48621: cos/sin 1.2773, logits x1.631), without attention_factor for a factor
// 64 model (PR 46280 / 48351: 1.4159, logits x2.005), vLLM's static "dynamic" base (issue 41236: x3.108 at
// alpha 2, d 64).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "ropekit/commands/frameworks_request.hpp"
#include "ropekit/encoding.hpp"
#include "support.hpp"

using namespace ropekit;

namespace {

double g(double s, double m = 1) { return s <= 1 ? 1 : 0.1 * m * std::log(s) + 1; }

const FrameworkRow& row(const std::vector<FrameworkRow>& rows, const std::string& framework, const std::string& version = "") {
  for (const auto& r : rows)
    if (framework_name(r.reading.framework) == framework && (version.empty() || r.reading.version == version)) return r;
  FAIL("no row for " << framework);
  throw;
}

// A 4-digit public figure: the value rounded to 4 significant digits.
double digits4(double x) {
  const double p = std::pow(10.0, 3 - std::floor(std::log10(x)));
  return std::round(x * p) / p;
}

std::vector<FrameworkRow> rows_of(test::ScratchDir& dir, const std::string& name, const std::string& json) {
  return framework_rows(dir.write(name, json), "", Where::options("ropekit frameworks"));
}

}  // namespace

TEST_CASE("frameworks: YaRN with mscale = mscale_all_dim = 1 (Ministral 3-like): vLLM and llama.cpp at 0.1 ln 16 + 1") {
  test::ScratchDir dir("fw-ministral");
  const auto rows = rows_of(dir, "config.json", R"({"model_type": "mistral", "hidden_size": 5120, "num_attention_heads": 32,
      "head_dim": 128, "num_hidden_layers": 40, "max_position_embeddings": 262144, "rope_theta": 1000000000.0,
      "rope_scaling": {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 16384,
                       "mscale": 1.0, "mscale_all_dim": 1.0, "beta_fast": 32.0, "beta_slow": 1.0}})");
  const auto& tf = row(rows, "transformers", "5.17");
  CHECK(tf.reading.cos_sin_factor == doctest::Approx(1).epsilon(1e-15));  // g(16, 1) / g(16, 1)
  const auto& vllm = row(rows, "vllm");
  CHECK(vllm.reading.cos_sin_factor == doctest::Approx(g(16)).epsilon(1e-15));
  CHECK(digits4(vllm.reading.cos_sin_factor) == 1.277);
  CHECK(digits4(vllm.logit_scale / tf.logit_scale) == 1.631);
  // sglang and mlx-lm forward mscale and mscale_all_dim: transformers' 1.
  CHECK(row(rows, "sglang").reading.cos_sin_factor == doctest::Approx(1).epsilon(1e-15));
  CHECK(row(rows, "mlx-lm").reading.cos_sin_factor == doctest::Approx(1).epsilon(1e-15));
  // llama.cpp's converter writes no mscale: attn_factor (1) x (1 + 0.1 ln 16).
  CHECK(row(rows, "llama.cpp").reading.cos_sin_factor == doctest::Approx(g(16)).epsilon(1e-15));
  // The frequencies are transformers' everywhere but llama.cpp (ggml's ramp) and the early transformers 4 (its ramp
  // from max_position_embeddings).
  CHECK(vllm.max_rel_freq_diff == 0);
  CHECK(vllm.kernel_max_diff == 0);
  CHECK(row(rows, "transformers", "4.45").max_rel_freq_diff > 0);
}

TEST_CASE("frameworks: YaRN 64 with attention_factor 1 (Laguna-like): dropped by vLLM, sglang, mlx-lm and llama.cpp") {
  test::ScratchDir dir("fw-laguna");
  const auto rows = rows_of(dir, "config.json", R"({"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16,
      "num_hidden_layers": 24, "max_position_embeddings": 262144, "rope_theta": 500000.0,
      "rope_scaling": {"rope_type": "yarn", "factor": 64.0, "original_max_position_embeddings": 4096,
                       "attention_factor": 1.0}})");
  const auto& tf = row(rows, "transformers", "5.17");
  CHECK(tf.reading.cos_sin_factor == 1);
  for (const char* f : {"vllm", "sglang", "mlx-lm"}) {
    CAPTURE(f);
    CHECK(row(rows, f).reading.cos_sin_factor == doctest::Approx(g(64)).epsilon(1e-15));
  }
  CHECK(digits4(row(rows, "vllm").reading.cos_sin_factor) == 1.416);
  CHECK(digits4(row(rows, "vllm").logit_scale / tf.logit_scale) == 2.005);
  // llama.cpp: the converter writes attn_factor = attention_factor = 1, and the runtime multiplies YaRN's mscale in.
  CHECK(row(rows, "llama.cpp").reading.cos_sin_factor == doctest::Approx(g(64)).epsilon(1e-15));
}

TEST_CASE("frameworks: vLLM's and sglang's static dynamic-NTK base b (s^2 - s + 1)^(d/(d-2)), x3.108 at 2 and d 64") {
  test::ScratchDir dir("fw-dynamic");
  const auto rows = rows_of(dir, "config.json", R"({"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 16,
      "num_hidden_layers": 4, "max_position_embeddings": 4096, "rope_theta": 10000.0,
      "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})");
  const double expected = std::pow(3.0, 64.0 / 62.0);
  for (const char* f : {"vllm", "sglang"}) {
    CAPTURE(f);
    const auto& r = row(rows, f);
    const auto& geometric = std::get<Geometric>(std::get<enc::Rope>(r.reading.encoding.value).freqs.source);
    CHECK(geometric.base / 10000 == doctest::Approx(expected).epsilon(1e-14));
    CHECK(digits4(geometric.base / 10000) == 3.108);
    // theta_0 = 1 for every base; the slowest pair differs by 1 - 3.108^(-62/64) = 1 - 1/3.
    CHECK(r.max_rel_freq_diff == doctest::Approx(1 - std::pow(expected, -62.0 / 64.0)).epsilon(1e-12));
  }
  // transformers and mlx-lm rescale only past max_position_embeddings (at it: the base), llama.cpp never.
  CHECK(row(rows, "mlx-lm").max_rel_freq_diff == 0);
  CHECK(row(rows, "llama.cpp").max_rel_freq_diff == 0);
}

TEST_CASE("frameworks: the committed configs: DeepSeek-V3's softmax, Phi-3's long factors, Gemma 3 alike everywhere") {
  const Where where = Where::options("ropekit frameworks");
  // DeepSeek-V3: cos/sin g(40,1)/g(40,1) = 1 and the logits x g(40,1)^2 in transformers, vLLM, sglang and llama.cpp.
  const auto ds = framework_rows(test::source_path("data/models/deepseek-v3.json"), "", where);
  for (const char* f : {"transformers", "vllm", "sglang", "llama.cpp"}) {
    CAPTURE(f);
    CHECK(row(ds, f).logit_scale == doctest::Approx(std::pow(g(40), 2)).epsilon(1e-14));
    CHECK(row(ds, f).reading.pairing == Pairing::adjacent);
  }
  // Phi-3 128k: vLLM and llama.cpp take the long factors (their contexts exceed 4096), transformers the short ones
  // before any length; the frequency difference is the largest |1/long_i - 1/short_i| / max of the two.
  const auto phi = framework_rows(test::source_path("data/models/phi-3-vision-128k.json"), "", where);
  const auto& tf = row(phi, "transformers", "5.17");
  const auto& lr = std::get<scaling::LongRope>(std::get<enc::Rope>(tf.reading.encoding.value).freqs.scaling);
  double worst = 0;
  for (std::size_t i = 0; i < lr.short_factor.size(); ++i) {
    const double a = 1 / lr.short_factor[i], b = 1 / lr.long_factor[i];
    worst = std::max(worst, std::abs(a - b) / std::max(a, b));
  }
  CHECK(row(phi, "vllm").max_rel_freq_diff == doctest::Approx(worst).epsilon(1e-12));
  CHECK(row(phi, "vllm").reading.cos_sin_factor == doctest::Approx(std::sqrt(1 + std::log(32.0) / std::log(4096.0))).epsilon(1e-15));
  CHECK(row(phi, "sglang").max_rel_freq_diff == 0);  // per batch: short until a position passes 4096
  // Gemma 3 4B: every framework computes transformers' frequencies and scales.
  const auto gemma = framework_rows(test::source_path("data/models/gemma-3-4b.json"), "", where);
  for (const auto& r : gemma) {
    CAPTURE(framework_name(r.reading.framework));
    CHECK(r.kernel_max_diff < 1e-12);  // llama.cpp's ggml convention changes no plain or linear frequency
    CHECK(r.logit_scale == 1);
  }
  CHECK(gemma.size() == 2 * 5);  // two layer types, five frameworks (transformers 4 computes what 5 does)
}

TEST_CASE("frameworks: Llama 3.1 through llama.cpp's float32 rope_freqs, and ALiBi compared on its scales only") {
  const Where where = Where::options("ropekit frameworks");
  // The converter's factors in float32: each frequency within a few float32 ulps of transformers' float64 (powf and
  // four float32 operations, 2^-24 each), but not exactly it.
  const auto llama = framework_rows(test::source_path("data/models/llama-3.1-8b.json"), "", where);
  const auto& cpp = row(llama, "llama.cpp");
  CHECK(cpp.max_rel_freq_diff > 0);
  CHECK(cpp.max_rel_freq_diff < 8 * 0x1p-24);
  CHECK(row(llama, "vllm").max_rel_freq_diff == 0);
  // BLOOM's ALiBi heads have no rotary frequencies: every framework's row, with no frequency difference.
  const auto bloom = framework_rows(test::source_path("data/models/bloom-560m.json"), "full_attention/head_0", where);
  CHECK(bloom.size() == 5);
  for (const auto& r : bloom) CHECK(r.max_rel_freq_diff == 0);
}

TEST_CASE("frameworks: refusals name the option and the constraint") {
  const Where where = Where::options("ropekit frameworks");
  test::ScratchDir dir("fw-bad");
  CHECK_THROWS_WITH_AS(framework_rows(test::source_path("data/models/gemma-3-4b.json"), "nope", where),
                       doctest::Contains("nope"), InputError);
  CHECK_THROWS_AS(framework_rows((dir.path() / "absent.json").string(), "", where), InputError);
}
