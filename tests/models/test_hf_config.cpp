// The config.json reader against what transformers 5.17 itself built from the same configs
// (tests/data/transformers/: configs.json holds each case's kwargs and the config transformers made of them,
// inv-freq.csv the inverse-frequency buffers of the model's own rotary module on CPU, as float32 bit patterns,
// with its attention scaling). Both styles are read: the config transformers saved (transformers 5 keys,
// rope_parameters) and the kwargs given (transformers 4 keys: rope_scaling, rope_theta, rotary_pct, ...).

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ropekit/encoding.hpp"
#include "ropekit/models/hf_config.hpp"
#include "models/hf_refusal.hpp"
#include "ropekit/models/model.hpp"

using namespace ropekit;
using json = nlohmann::json;

namespace {

const std::string kData = ROPEKIT_SOURCE_DIR "/tests/data/transformers/";

struct Buffer {
  std::string case_name, buffer;
  double attention_scaling = 1;
  std::vector<double> values;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

// The CPU buffers at the module's construction (no seq_len: before any dynamic/LongRoPE update).
std::vector<Buffer> cpu_buffers() {
  std::ifstream f(kData + "inv-freq.csv");
  std::string line;
  std::getline(f, line);  // case,class,device,buffer,seq_len,attention_scaling,n,float32_bits
  std::vector<Buffer> out;
  while (std::getline(f, line)) {
    const auto c = split(line, ',');
    if (c.size() < 8 || c[2] != "cpu" || !c[4].empty()) continue;
    Buffer b{c[0], c[3], std::stod(c[5]), {}};
    for (const auto& hex : split(c[7], ' '))
      if (!hex.empty()) b.values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16))));
    out.push_back(b);
  }
  return out;
}

const json& cases() {
  static const json j = [] {
    std::ifstream f(kData + "configs.json");
    std::stringstream text;
    text << f.rdbuf();
    return json::parse(python_json_to_strict(text.str(), "configs.json"));  // Python's json writes Infinity
  }();
  return j.at("cases");
}

// The layer type a buffer belongs to: "<type>_inv_freq" names it; "inv_freq" is every rotary layer type.
// Whether the rotary part of e (a decoupled head's rope part) is scaled by scheme S.
template <class S>
bool scheme_is(const Encoding& e) {
  const FrequencySchedule* f = schedule_of(*rotary_leaves(e).front());
  return f != nullptr && std::holds_alternative<S>(f->scaling);
}

std::vector<const LayerType*> layers_of(const Model& m, const std::string& buffer) {
  std::vector<const LayerType*> out;
  const std::string suffix = "_inv_freq";
  for (const auto& l : m.layer_types) {
    if (std::holds_alternative<enc::Nope>(l.encoding.value)) continue;  // a NoPE layer has no buffer
    if (buffer == "inv_freq" || buffer == l.name + suffix) out.push_back(&l);
  }
  return out;
}

// float64 frequencies of the reader's encoding against transformers' float32 buffer. transformers computes them in
// float32 (pow, division, the scheme's products), a few roundings of 2^-24 each: 2e-6 relative covers 16 ulp.
void check_buffer(const Model& m, const Buffer& b) {
  const auto layers = layers_of(m, b.buffer);
  REQUIRE_FALSE(layers.empty());
  for (const auto* l : layers) {
    CAPTURE(l->name);
    CAPTURE(spelling(l->encoding));
    // The buffer at construction: dynamic NTK before any rescaling (at its original length).
    const bool dynamic = scheme_is<scaling::Dynamic>(l->encoding);
    const auto ft = frequencies(l->encoding,
                                dynamic ? std::optional<double>(*m.context_length) : std::nullopt);
    // Proportional RoPE's buffer holds its zero frequencies too: ropekit keeps them as identity planes.
    const auto live = static_cast<std::size_t>(ft.theta.rows());
    if (scheme_is<scaling::Proportional>(l->encoding)) {
      REQUIRE(live + static_cast<std::size_t>(ft.identity_dims / 2) == b.values.size());
      for (std::size_t i = live; i < b.values.size(); ++i) CHECK(b.values[i] == 0);
    } else {
      REQUIRE(live == b.values.size());
    }
    double worst = 0;
    for (std::size_t i = 0; i < live; ++i)
      worst = std::max(worst, std::abs(ft.theta(static_cast<Eigen::Index>(i), 0) - b.values[i]) / b.values[i]);
    CHECK(worst < 2e-6);
    // The attention factor: transformers keeps it as a Python float; the same formula in float64.
    CHECK(std::abs(l->attention_factor - b.attention_scaling) <= 4e-16 * b.attention_scaling);
  }
}

}  // namespace

TEST_CASE("config.json as transformers 5 saved it: every layer type's frequencies and attention factor") {
  int checked = 0;
  for (const auto& b : cpu_buffers()) {
    CAPTURE(b.case_name);
    CAPTURE(b.buffer);
    const auto& c = cases().at(b.case_name);
    try {
      check_buffer(read_hf_config(c.at("config").dump(), b.case_name + "/config.json"), b);
    } catch (const InputError& e) {
      FAIL_CHECK(std::string(e.what()));
    }
    ++checked;
  }
  CHECK(checked >= 40);
}

TEST_CASE("frequencies --float32: transformers' CPU buffers bit for bit (PyTorch's CPU pow is SLEEF's powf_u10)") {
  // Every CPU buffer of every case, through the reader's spelling and the float32 emulation. One entry of one buffer
  // (GPT-NeoX's defaults: 24 rotary dims) is 1 ulp off; every other entry must be equal.
  int entries = 0, off = 0, buffers = 0;
  for (const auto& b : cpu_buffers()) {
    const auto& c = cases().at(b.case_name);
    const Model m = read_hf_config(c.at("config").dump(), b.case_name);
    for (const auto* l : layers_of(m, b.buffer)) {
      CAPTURE(b.case_name);
      CAPTURE(spelling(l->encoding));
      const bool dynamic = scheme_is<scaling::Dynamic>(l->encoding);
      const auto ft = frequencies(l->encoding,
                                  dynamic ? std::optional<double>(*m.context_length) : std::nullopt,
                                  Convention::huggingface, true);
      for (Eigen::Index i = 0; i < ft.theta.rows(); ++i) {
        const auto mine = std::bit_cast<std::uint32_t>(static_cast<float>(ft.theta(i, 0)));
        const auto want = std::bit_cast<std::uint32_t>(static_cast<float>(b.values[static_cast<std::size_t>(i)]));
        ++entries;
        if (mine != want) {
          ++off;
          CHECK(std::abs(static_cast<std::int64_t>(mine) - static_cast<std::int64_t>(want)) == 1);
          CHECK(b.case_name == "defaults_gpt_neox");
        }
      }
      ++buffers;
    }
  }
  CHECK(buffers >= 57);
  CHECK(entries > 3000);
  CHECK(off <= 1);
}

TEST_CASE("config.json with transformers 4 keys (the kwargs given): the same frequencies") {
  int checked = 0;
  for (const auto& b : cpu_buffers()) {
    const auto& c = cases().at(b.case_name);
    json input = c.at("input");
    if (input.empty()) continue;  // a model class's own defaults: only the saved config holds them
    CAPTURE(b.case_name);
    input["model_type"] = c.at("config").value("model_type", "");
    try {
      check_buffer(read_hf_config(input.dump(), b.case_name + "/input.json"), b);
    } catch (const InputError& e) {
      FAIL_CHECK(std::string(e.what()));
    }
    ++checked;
  }
  CHECK(checked >= 15);
}

TEST_CASE("config.json: bad files are refused in one line naming the key and value") {
  const std::string llama = R"("hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2)";
  struct Bad {
    std::string text, expect;
  };
  const Bad bad[] = {
      {"{", "not JSON"},
      {R"({"rope_theta": 2e4576})", "not JSON ([json.exception.out_of_range.406] number overflow"},  // found by the fuzzer
      {"{" + llama + R"(, "max_position_embeddings": 100, "rope_scaling": {"rope_type": "longrope", "long_factor": [1],
          "original_max_position_embeddings": 50}})", "rope_parameters.short_factor is missing"},  // the fuzzer too
      {"[1, 2]", "must be a JSON object"},
      {"{" + llama + R"(, "rope_theta": -5})", "rope_theta = -5 (must be a number > 0)"},
      {"{" + llama + R"(, "rope_theta": 0})", "rope_theta = 0 (must be a number > 0)"},
      {"{" + llama + R"(, "rope_theta": Infinity})", "rope_theta = \"Infinity\" (must be a number > 0)"},
      {"{" + llama + R"(, "rope_theta": "1e4"})", "rope_theta = \"1e4\" (must be a number > 0)"},
      {"{" + llama + R"(, "rope_parameters": [1]})", "rope_parameters = [1] (must be an object"},
      {"{" + llama + R"(, "rope_scaling": {"rope_type": "warp", "factor": 2}})", "rope_type = \"warp\" (must be one of"},
      {"{" + llama + R"(, "rope_scaling": {"rope_type": "linear"}})", "rope_parameters.factor is missing"},
      {R"({"hidden_size": 4097, "num_attention_heads": 32})", "hidden_size = 4097 (must be divisible by num_attention_heads = 32)"},
      {R"({"num_attention_heads": 32})", "head_dim is missing"},
      {"{" + llama + R"(, "layer_types": ["full_attention"]})", "layer_types = \"1 entries\" (must be one entry per layer (num_hidden_layers = 2))"},
      {R"({"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2.5})",
       "num_hidden_layers = 2.5 (must be an integer"},
      {"{" + llama + R"(, "no_rope_layers": [1]})", "no_rope_layers = [1] (must be a list of 2 entries 0 or 1"},
      {R"({"text_config": {"text_config": {"text_config": {"text_config": {"text_config": {}}}}}})", "text_config"},
      {std::string(100, '[') + std::string(100, ']'), "nests more than 64 levels"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.text.substr(0, 120));
    const std::string what = refusal(b.text);
    CAPTURE(what);
    CHECK(what.rfind("c.json: ", 0) == 0);
    CHECK(what.find(b.expect) != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
}

TEST_CASE("config.json: Qwen3's attn_factor is read and noted with the factor by which vLLM's logits differ") {
  // models.md section 4: DeepSeek-R1-0528-Qwen3-8B ships attn_factor 0.8782488562869419 with YaRN factor 4;
  // transformers ignores it (attention factor 0.1 ln 4 + 1 = 1.1386294), vLLM multiplies it in: the logits differ
  // by 1 / 0.8782488562869419^2 = 1.2964770.
  const std::string text = R"({"model_type": "qwen3", "head_dim": 128, "num_hidden_layers": 36,
    "max_position_embeddings": 131072, "rope_theta": 1000000,
    "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768,
                     "attn_factor": 0.8782488562869419}})";
  const Model m = read_hf_config(text, "qwen3.json");
  REQUIRE(m.layer_types.size() == 1);
  const auto& l = m.layer_types[0];
  CHECK(l.layers == 36);
  CHECK(std::abs(l.attention_factor - (0.1 * std::log(4.0) + 1)) < 1e-15);
  std::string notes;
  for (const auto& n : l.notes) notes += n + "|";
  CAPTURE(notes);
  CHECK(notes.find("attn_factor = 0.8782488562869419") != std::string::npos);
  CHECK(notes.find("1.296477") != std::string::npos);
}

TEST_CASE("config.json: layer types with their windows, NoPE layers and the Llama 4 temperature note") {
  // Gemma 3 (transformers 4 keys): every 6th layer global with linear factor 8 at 1e6, sliding layers at 1e4.
  const Model g = read_hf_config(R"({"model_type": "gemma3_text", "head_dim": 256, "num_hidden_layers": 12,
      "sliding_window": 1024, "sliding_window_pattern": 6, "rope_theta": 1000000, "rope_local_base_freq": 10000,
      "rope_scaling": {"rope_type": "linear", "factor": 8.0}})", "g.json");
  REQUIRE(g.layer_types.size() == 2);
  CHECK(g.layer_types[0].name == "sliding_attention");
  CHECK(g.layer_types[0].layers == 10);
  CHECK(g.layer_types[0].window == Window{Window::Kind::sliding, 1024});
  CHECK(spelling(g.layer_types[0].encoding) == "rope:dim=256,base=10000,F=128");
  CHECK(g.layer_types[1].name == "full_attention");
  CHECK(g.layer_types[1].layers == 2);
  CHECK(spelling(g.layer_types[1].encoding) == "rope:dim=256,base=1000000,F=128,scaling=linear(factor=8)");
  // Llama 4: NoPE every 4th layer (no_rope_layers 0), chunked attention elsewhere.
  const Model l4 = read_hf_config(R"({"model_type": "llama4_text", "head_dim": 128, "num_hidden_layers": 4,
      "attention_chunk_size": 8192, "attn_temperature_tuning": true, "floor_scale": 8192, "attn_scale": 0.1,
      "layer_types": ["chunked_attention", "chunked_attention", "chunked_attention", "full_attention"],
      "no_rope_layers": [1, 1, 1, 0], "rope_parameters": {"rope_type": "default", "rope_theta": 500000}})", "l4.json");
  REQUIRE(l4.layer_types.size() == 2);
  CHECK(l4.layer_types[0].name == "chunked_attention");
  CHECK(l4.layer_types[0].window == Window{Window::Kind::chunked, 8192});
  // The NoPE layers keep the config's name (their type has no rotary layers) and are as wide as the head: G = I_128.
  CHECK(l4.layer_types[1].name == "full_attention");
  CHECK(spelling(l4.layer_types[1].encoding) == "nope:dim=128");
  CHECK(l4.layer_types[1].head_dim == 128);
  CHECK(l4.layer_types[1].rotary_dims == 0);
  REQUIRE(l4.layer_types[1].notes.size() == 1);
  CHECK(l4.layer_types[1].notes[0].find("0.1 ln(1 + floor((p + 1)/8192)) + 1") != std::string::npos);
  // models.md section 4: s(p) at p = 8190 / 8191 / 65536 / 1048576 is 1.0 / 1.0693 / 1.2197 / 1.4860
  // (0.1 ln 1 + 1, 0.1 ln 2 + 1, 0.1 ln 9 + 1, 0.1 ln 129 + 1).
  REQUIRE(l4.layer_types[1].temperature);
  const auto& t = *l4.layer_types[1].temperature;
  CHECK(query_scale(t, 8190) == 1.0);
  CHECK(std::abs(query_scale(t, 8191) - 1.0693) < 5e-5);
  CHECK(std::abs(query_scale(t, 65536) - 1.2197) < 5e-5);
  CHECK(std::abs(query_scale(t, 1048576) - 1.4860) < 5e-5);
}

TEST_CASE("config.json: gpt-oss's YaRN, models.md section 4's numbers") {
  // n 64, B 1.5e5, YaRN factor 32 from 4096, beta 32/1, truncate false: correction range
  // [8.092779115512402, 17.39802450158856] (vLLM PR #28244), attention factor 0.1 ln 32 + 1 = 1.3465736.
  const Model m = read_hf_config(R"({"model_type": "gpt_oss", "head_dim": 64, "num_hidden_layers": 24,
      "sliding_window": 128, "max_position_embeddings": 131072,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention",
                      "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                      "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention",
                      "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention",
                      "sliding_attention", "full_attention", "sliding_attention", "full_attention"],
      "rope_parameters": {"rope_type": "yarn", "rope_theta": 150000, "factor": 32.0, "beta_fast": 32.0,
                          "beta_slow": 1.0, "original_max_position_embeddings": 4096, "truncate": false}})", "oss.json");
  REQUIRE(m.layer_types.size() == 2);
  CHECK(m.layer_types[0].layers == 12);
  CHECK(m.layer_types[0].window == Window{Window::Kind::sliding, 128});
  CHECK(std::abs(m.layer_types[1].attention_factor - 1.3465736) < 5e-8);
  const Encoding e = m.layer_types[1].encoding;
  const auto* f = schedule_of(e);
  REQUIRE(f != nullptr);
  const auto& y = std::get<scaling::Yarn>(f->scaling);
  const auto range = yarn_correction_range(y, 64, 150000);
  CHECK(std::abs(range.low - 8.092779115512402) < 1e-13);
  CHECK(std::abs(range.high - 17.39802450158856) < 1e-13);
  auto truncated = y;
  truncated.truncate = true;
  CHECK(yarn_correction_range(truncated, 64, 150000).low == 8);
  CHECK(yarn_correction_range(truncated, 64, 150000).high == 18);
}

TEST_CASE("config.json: DeepSeek's decoupled head and its softmax multiplier mscale(s, mscale_all_dim)^2") {
  // DeepSeek-V3: 64 rotated + 128 unrotated dims; YaRN factor 40, mscale = mscale_all_dim = 1: the rotary
  // attention factor is mscale(40, 1) / mscale(40, 1) = 1 and the softmax scale (0.1 ln 40 + 1)^2.
  const Model m = read_hf_config(R"({"model_type": "deepseek_v3", "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
      "num_hidden_layers": 61, "max_position_embeddings": 163840, "rope_theta": 10000,
      "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32,
                       "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}})", "ds.json");
  REQUIRE(m.layer_types.size() == 1);
  const auto& l = m.layer_types[0];
  CHECK(l.head_dim == 192);
  CHECK(l.rotary_dims == 64);
  CHECK(l.attention_factor == 1.0);
  const double ms = 0.1 * std::log(40.0) + 1;
  CHECK(std::abs(l.softmax_scale - ms * ms) < 1e-15);
}

// The reader builds values: each field below is written from the config's keys by hand (transformers' names on the
// left of each comment), not taken from the reader's output or spelling.
TEST_CASE("config.json: a layer type's encoding is a value whose fields are the config's keys") {
  // DeepSeek-V3's rope_scaling: decoupled head (64 rotated + 128 not), YaRN with every transformers key given.
  const Model m = read_hf_config(R"({"model_type": "deepseek_v3", "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
      "num_hidden_layers": 61, "max_position_embeddings": 163840, "rope_theta": 10000,
      "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 24,
                       "beta_slow": 2, "mscale": 0.5, "mscale_all_dim": 0.75, "truncate": false}})", "ds.json");
  REQUIRE(m.layer_types.size() == 1);
  const auto& sum = std::get<enc::DirectSum>(m.layer_types[0].encoding.value);
  REQUIRE(sum.parts.size() == 2);
  CHECK(std::get<enc::Nope>(sum.parts[1].value).dim == 128);  // qk_nope_head_dim
  const FrequencySchedule& f = std::get<enc::Rope>(sum.parts[0].value).freqs;
  const auto& g = std::get<Geometric>(f.source);
  CHECK(g.dim == 64);        // qk_rope_head_dim
  CHECK(g.base == 10000);    // rope_theta
  CHECK(g.partial == 1);     // no partial_rotary_factor
  CHECK(g.count == 32);      // 64 / 2 pairs
  const auto& y = std::get<scaling::Yarn>(f.scaling);
  CHECK(y.factor == 40.0);   // factor
  CHECK(y.orig == 4096);     // original_max_position_embeddings
  CHECK(y.beta_fast == 24);  // beta_fast
  CHECK(y.beta_slow == 2);   // beta_slow
  CHECK(y.mscale == 0.5);    // mscale
  CHECK(y.mscale_all_dim == 0.75);  // mscale_all_dim
  CHECK_FALSE(y.truncate);   // truncate
  CHECK_FALSE(y.max.has_value());  // factor given: max_position_embeddings is not the factor's source
  CHECK_FALSE(y.attention_factor.has_value());

  // Llama 3.1 (transformers 4 keys) and YaRN without factor (s = max_position_embeddings / original).
  const Model l3 = read_hf_config(R"({"model_type": "llama", "head_dim": 128, "num_hidden_layers": 2,
      "max_position_embeddings": 131072, "rope_theta": 500000.0, "rope_scaling": {"rope_type": "llama3",
      "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})",
                                  "l3.json");
  const auto& l3s = std::get<scaling::Llama3>(std::get<enc::Rope>(l3.layer_types[0].encoding.value).freqs.scaling);
  CHECK(l3s.factor == 8);
  CHECK(l3s.low == 1);
  CHECK(l3s.high == 4);
  CHECK(l3s.orig == 8192);
  const Model q = read_hf_config(R"({"model_type": "qwen3", "head_dim": 128, "num_hidden_layers": 2,
      "max_position_embeddings": 131072, "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000,
      "original_max_position_embeddings": 32768, "attention_factor": 1.25}})", "q.json");
  const auto& qy = std::get<scaling::Yarn>(std::get<enc::Rope>(q.layer_types[0].encoding.value).freqs.scaling);
  CHECK_FALSE(qy.factor.has_value());
  CHECK(qy.max == 131072.0);  // config.max_position_embeddings
  CHECK(qy.orig == 32768);
  CHECK(qy.attention_factor == 1.25);
  CHECK(qy.beta_fast == 32);  // the struct's defaults, transformers' (32, 1, truncate true)
  CHECK(qy.beta_slow == 1);
  CHECK(qy.truncate);
}

TEST_CASE("config.json: a scheme key is refused with the reader's message, naming the transformers key") {
  // A required key (by transformers' rope type) that is absent, a list that is not one, a key's rule (orig > 1).
  const std::string head = R"({"model_type": "llama", "head_dim": 128, "num_hidden_layers": 2,
      "max_position_embeddings": 131072, "rope_theta": 500000.0, "rope_scaling": )";
  const auto message = [&](const std::string& scaling) {
    try {
      (void)read_hf_config(head + scaling + "}", "c.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(message(R"({"rope_type": "llama3", "factor": 8, "high_freq_factor": 4,
                    "original_max_position_embeddings": 8192})") ==
        "c.json: rope_parameters.low_freq_factor is missing (rope_type llama3 needs it)");
  CHECK(message(R"({"rope_type": "linear"})") == "c.json: rope_parameters.factor is missing (rope_type linear needs it)");
  CHECK(message(R"({"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 8192,
                    "beta_fast": "fast"})") == "c.json: beta_fast = \"fast\" (must be a finite number)");
  const std::string orig = message(R"({"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 1})");
  CHECK(orig.find("c.json: layer type full_attention: ") == 0);
  CHECK(orig.find("yarn.orig = 1 (must be") != std::string::npos);
}
