// The GGUF reader against files written here byte by byte from ggml's GGUF specification (magic, version, counts,
// typed key-value pairs, tensor infos, aligned data), and llama.cpp's meaning of the rope keys: Llama 3.1's
// `rope_freqs` tensor divides theta_i = base^(-2i/n), giving the llama3-scaled frequencies to float32 rounding.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "ropekit/encoding.hpp"
#include "ropekit/models/gguf.hpp"
#include "ropekit/models/model.hpp"
#include "support.hpp"

using namespace ropekit;

namespace {

// A GGUF v3 file: metadata then tensor infos then data aligned to 32 bytes.
class Writer {
 public:
  template <class T>
  void raw(T v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    bytes_.append(p, sizeof(T));
  }
  void str(const std::string& s) {
    raw<std::uint64_t>(s.size());
    bytes_ += s;
  }
  void kv_string(const std::string& k, const std::string& v) {
    str(k);
    raw<std::uint32_t>(8);
    str(v);
  }
  void kv_u32(const std::string& k, std::uint32_t v) {
    str(k);
    raw<std::uint32_t>(4);
    raw(v);
  }
  void kv_f32(const std::string& k, float v) {
    str(k);
    raw<std::uint32_t>(6);
    raw(v);
  }
  std::string bytes_;
};

struct Tensor {
  std::string name;
  std::vector<float> values;
};

// `arrays`: keys holding arrays of float32; `shift` moves every tensor's offset by that many bytes (unaligned when
// not a multiple of 32).
std::string gguf(const std::vector<std::pair<std::string, float>>& f32, const std::vector<std::pair<std::string, std::uint32_t>>& u32,
                 const std::vector<std::pair<std::string, std::string>>& strings, const std::vector<Tensor>& tensors,
                 const std::vector<std::pair<std::string, std::vector<float>>>& arrays = {}, std::uint64_t shift = 0,
                 const std::vector<std::pair<std::string, std::vector<std::uint32_t>>>& u32_arrays = {}) {
  Writer w;
  w.bytes_ = "GGUF";
  w.raw<std::uint32_t>(3);
  w.raw<std::uint64_t>(tensors.size() + 1);  // + a weight tensor the reader must not read
  w.raw<std::uint64_t>(f32.size() + u32.size() + strings.size() + arrays.size() + u32_arrays.size() + 1);
  for (const auto& [k, v] : strings) w.kv_string(k, v);
  for (const auto& [k, v] : u32) w.kv_u32(k, v);
  for (const auto& [k, v] : f32) w.kv_f32(k, v);
  for (const auto& [k, v] : arrays) {
    w.str(k);
    w.raw<std::uint32_t>(9);  // ARRAY
    w.raw<std::uint32_t>(6);  // of F32
    w.raw<std::uint64_t>(v.size());
    for (float x : v) w.raw(x);
  }
  for (const auto& [k, v] : u32_arrays) {
    w.str(k);
    w.raw<std::uint32_t>(9);  // ARRAY
    w.raw<std::uint32_t>(4);  // of UINT32
    w.raw<std::uint64_t>(v.size());
    for (std::uint32_t x : v) w.raw(x);
  }
  // A vocabulary-like array of strings, skipped by the reader.
  w.str("tokenizer.ggml.tokens");
  w.raw<std::uint32_t>(9);
  w.raw<std::uint32_t>(8);
  w.raw<std::uint64_t>(3);
  for (const char* t : {"<s>", "a", "bc"}) w.str(t);
  std::uint64_t offset = shift;
  for (const auto& t : tensors) {
    w.str(t.name);
    w.raw<std::uint32_t>(1);
    w.raw<std::uint64_t>(t.values.size());
    w.raw<std::uint32_t>(0);  // F32
    w.raw<std::uint64_t>(offset);
    offset += (t.values.size() * 4 + 31) / 32 * 32;
  }
  w.str("blk.0.attn_q.weight");
  w.raw<std::uint32_t>(2);
  w.raw<std::uint64_t>(4096);
  w.raw<std::uint64_t>(4096);
  w.raw<std::uint32_t>(1);  // F16: never read (its data is not even in the file)
  w.raw<std::uint64_t>(offset);
  while (w.bytes_.size() % 32) w.bytes_ += '\0';
  for (const auto& t : tensors) {
    for (float v : t.values) w.raw(v);
    while (w.bytes_.size() % 32) w.bytes_ += '\0';
  }
  return w.bytes_;
}

// Llama 3.1's frequency factors as Meta's reference code defines them (and llama.cpp's converter stores them):
// wavelength 2 pi / theta below orig/high: 1; above orig/low: factor; between: 1 / ((1 - s)/factor + s), with
// s = (orig/wavelength - low)/(high - low).
std::vector<float> llama31_factors(double base, int n) {
  const double factor = 8, low = 1, high = 4, orig = 8192;
  std::vector<float> out;
  for (int i = 0; i < n / 2; ++i) {
    const double theta = std::pow(base, -2.0 * i / n), wavelength = 2 * std::numbers::pi / theta;
    double f = 1;
    if (wavelength > orig / low) {
      f = factor;
    } else if (wavelength >= orig / high) {
      const double s = (orig / wavelength - low) / (high - low);
      f = 1 / ((1 - s) / factor + s);
    }
    out.push_back(static_cast<float>(f));
  }
  return out;
}

}  // namespace

TEST_CASE("GGUF: Llama 3.1's rope_freqs tensor gives the llama3-scaled frequencies to float32 rounding") {
  test::ScratchDir dir("gguf");
  const std::string path = dir.write(
      "llama.gguf", gguf({{"llama.rope.freq_base", 500000.0f}},
                         {{"llama.attention.head_count", 32}, {"llama.embedding_length", 4096},
                          {"llama.block_count", 32}, {"llama.rope.dimension_count", 128},
                          {"llama.context_length", 131072}},
                         {{"general.architecture", "llama"}}, {{"rope_freqs.weight", llama31_factors(500000, 128)}}));
  const Model m = read_model(path);
  REQUIRE(m.layer_types.size() == 1);
  const auto& l = m.layer_types[0];
  CHECK(m.model_type == "llama");
  CHECK(l.layers == 32);
  CHECK(l.head_dim == 128);
  CHECK(l.rotary_dims == 128);
  const auto mine = frequencies(l.encoding).theta;
  const auto llama3 =
      frequencies(parse_encoding("rope:dim=128,base=500000,scaling=llama3(factor=8,low=1,high=4,orig=8192)")).theta;
  REQUIRE(mine.rows() == llama3.rows());
  // The factors are stored in float32: a relative 2^-24 per factor (plus float64 roundings, 1e-15).
  for (Eigen::Index i = 0; i < mine.rows(); ++i) CHECK(std::abs(mine(i, 0) / llama3(i, 0) - 1) < 0x1p-24 + 1e-15);
}

TEST_CASE("GGUF: plain and linear-scaled RoPE from the keys") {
  test::ScratchDir dir("gguf2");
  const std::string path = dir.write(
      "m.gguf", gguf({{"qwen2.rope.freq_base", 1000000.0f}, {"qwen2.rope.scaling.factor", 4.0f}},
                     {{"qwen2.attention.head_count", 28}, {"qwen2.embedding_length", 3584}, {"qwen2.block_count", 28}},
                     {{"general.architecture", "qwen2"}, {"qwen2.rope.scaling.type", "linear"}}, {}));
  const Model m = read_model(path);
  CHECK(spelling(m.layer_types[0].encoding) == "rope:dim=128,base=1000000,F=64,scaling=linear(factor=4)");
}

TEST_CASE("GGUF: the factor's older key rope.scale_linear, read where rope.scaling.factor is absent") {
  test::ScratchDir dir("gguf-scale-linear");
  const std::string path = dir.write(
      "m.gguf", gguf({{"llama.rope.freq_base", 10000.0f}, {"llama.rope.scale_linear", 2.0f}},
                     {{"llama.attention.head_count", 32}, {"llama.embedding_length", 4096}, {"llama.block_count", 32}},
                     {{"general.architecture", "llama"}, {"llama.rope.scaling.type", "linear"}}, {}));
  const Model m = read_model(path);  // held: a reference into the temporary's layer types would dangle (ASan)
  const auto& l = m.layer_types.at(0);
  CHECK(std::get<scaling::Linear>(std::get<enc::Rope>(l.encoding.value).freqs.scaling).factor == 2);
}

TEST_CASE("GGUF: DeepSeek's yarn_log_multiplier scales the softmax as transformers' mscale_all_dim, cos and sin stay 1") {
  // DeepSeek-V3 as a GGUF: 64 of 192 dims rotate, YaRN s = 40 from 4096. The converter writes 0.1 x mscale_all_dim
  // (0.1 for mscale_all_dim = 1); llama.cpp's loader divides it by 0.1 again ([TAG_DEEPSEEK2_YARN_LOG_MUL_FIX]) and
  // its graph scales the logits by (attn_factor (1 + 0.1 mscale_all_dim ln s))^2, cancelling rope_yarn's mscale on
  // cos and sin: what transformers does with data/models/deepseek-v3.json (its factor 40, mscale = mscale_all_dim = 1).
  test::ScratchDir dir("gguf3");
  const std::string path = dir.write(
      "ds.gguf", gguf({{"deepseek2.rope.freq_base", 10000.0f}, {"deepseek2.rope.scaling.factor", 40.0f},
                       {"deepseek2.rope.scaling.yarn_log_multiplier", 0.1f}},
                      {{"deepseek2.attention.head_count", 128}, {"deepseek2.attention.key_length", 192},
                       {"deepseek2.rope.dimension_count", 64}, {"deepseek2.rope.scaling.original_context_length", 4096},
                       {"deepseek2.context_length", 163840}, {"deepseek2.embedding_length", 7168},
                       {"deepseek2.block_count", 61}},
                      {{"general.architecture", "deepseek2"}, {"deepseek2.rope.scaling.type", "yarn"}}, {}));
  const Model m = read_model(path);
  const auto& l = m.layer_types.at(0);
  CHECK(l.head_dim == 192);
  CHECK(l.rotary_dims == 64);
  CHECK(l.pairing == Pairing::adjacent);  // llama_model_rope_type: DEEPSEEK2 is NORM
  const Model hf = read_model(test::source_path("data/models/deepseek-v3.json"));
  // x = 0.1 is stored as float32 (relative 1.5e-8), which the squared multiplier carries to about 1e-8.
  CHECK(l.softmax_scale == doctest::Approx(hf.layer_types.at(0).softmax_scale).epsilon(1e-7));
  CHECK(l.softmax_scale == doctest::Approx(std::pow(0.1 * std::log(40.0) + 1, 2)).epsilon(1e-7));
  CHECK(l.attention_factor == 1);
  CHECK(hf.layer_types.at(0).attention_factor == doctest::Approx(1).epsilon(1e-15));
  // The value, field by field from the keys: 64 of 192 dims rotate (partial 64/192), YaRN s = 40 from 4096 with
  // llama.cpp's betas 32 and 1; its cos/sin factor 1 given explicitly (the graph cancels YaRN's).
  const FrequencySchedule& f = std::get<enc::Rope>(l.encoding.value).freqs;
  const auto& g = std::get<Geometric>(f.source);
  CHECK(g.dim == 192);
  CHECK(g.base == 10000);
  CHECK(g.partial == 64.0 / 192.0);
  CHECK(g.count == 32);
  const auto& y = std::get<scaling::Yarn>(f.scaling);
  CHECK(y.factor == 40.0);
  CHECK(y.orig == 4096);
  CHECK(y.beta_fast == 32);
  CHECK(y.beta_slow == 1);
  CHECK(y.attention_factor == 1.0);
  CHECK_FALSE(y.mscale);
  CHECK_FALSE(y.max);
  const std::string notes = layer_notes(m, l);
  CHECK(notes.find("builds between llama.cpp PR 17945 and its loader fix read (1 + 0.1 x ln s)^2 = " +
                   format_significant(std::pow(1 + 0.01 * std::log(40.0), 2), 8)) != std::string::npos);
}

TEST_CASE("GGUF: truncated and lying files are refused in one line, never read past the file") {
  test::ScratchDir dir("gguf3");
  const std::string good = gguf({{"llama.rope.freq_base", 10000.0f}},
                                {{"llama.attention.head_count", 32}, {"llama.embedding_length", 4096}},
                                {{"general.architecture", "llama"}}, {});
  auto refusal = [&](const std::string& bytes) {
    const std::string p = dir.write("bad.gguf", bytes);
    try {
      (void)read_model(p);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // Every truncation of a good file's metadata and tensor infos is refused (never a crash or a read past the
  // end); the last 31 bytes may be alignment padding before the (absent) weights, which nothing reads.
  for (std::size_t n = 4; n + 31 < good.size(); n += 7) {
    CAPTURE(n);
    const auto what = refusal(good.substr(0, n));
    CHECK_FALSE(what.empty());
    CHECK(what.find('\n') == std::string::npos);
  }
  // A string length of 2^63, a key-value count the file cannot hold, a bad version, an unknown value type.
  std::string huge = good;
  const std::size_t key_len_at = 4 + 4 + 8 + 8;
  const std::uint64_t big = std::uint64_t{1} << 63;
  std::memcpy(huge.data() + key_len_at, &big, 8);
  CHECK(refusal(huge).find("a key of 9223372036854775808 bytes") != std::string::npos);
  std::string counts = good;
  const std::uint64_t many = std::uint64_t{1} << 40;
  std::memcpy(counts.data() + 16, &many, 8);
  CHECK(refusal(counts).find("key-value count 1099511627776") != std::string::npos);
  std::string version = good;
  version[4] = 7;
  CHECK(refusal(version).find("version = 7 (must be 2 or 3)") != std::string::npos);
  std::string type = good;
  const std::size_t type_at = key_len_at + 8 + std::string("general.architecture").size();
  type[type_at] = 99;
  CHECK(refusal(type).find("value type 99") != std::string::npos);
  CHECK(refusal(gguf({}, {}, {}, {})).find("general.architecture is missing") != std::string::npos);
}

namespace {

std::string refused(const std::string& path) {
  try {
    (void)read_model(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::vector<std::pair<std::string, std::uint32_t>> kLlama = {
    {"llama.attention.head_count", 32}, {"llama.embedding_length", 4096}, {"llama.context_length", 8192}};

}  // namespace

TEST_CASE("GGUF: rope keys of another type than llama.cpp reads are refused naming the key and both types") {
  // llama.cpp's loader reads rope.freq_base as float32 and rope.dimension_count as uint32, refusing any other type;
  // these used to be taken as absent (base 10000, the whole head rotating).
  test::ScratchDir dir("gguf-types");
  const std::string s = dir.write("s.gguf", gguf({}, kLlama, {{"general.architecture", "llama"}, {"llama.rope.freq_base", "500000"}}, {}));
  CHECK(refused(s) == s + ": llama.rope.freq_base = '500000' of type string (must be of type float32, as llama.cpp's "
                          "loader reads it)");
  const std::string a = dir.write("a.gguf", gguf({}, kLlama, {{"general.architecture", "llama"}}, {},
                                                 {{"llama.rope.freq_base", {500000.0f}}}));
  CHECK(refused(a) == a + ": llama.rope.freq_base = an array (must be of type float32, as llama.cpp's "
                          "loader reads it)");
  const std::string f = dir.write("f.gguf", gguf({{"llama.rope.dimension_count", 64.0f}}, kLlama,
                                                 {{"general.architecture", "llama"}}, {}));
  CHECK(refused(f) == f + ": llama.rope.dimension_count = 64 of type float32 (must be of type uint32, as llama.cpp's "
                          "loader reads it)");
}

TEST_CASE("GGUF: absent rope keys take llama.cpp's defaults, and a note says so") {
  test::ScratchDir dir("gguf-defaults");
  const std::string p = dir.write("d.gguf", gguf({}, kLlama, {{"general.architecture", "llama"}}, {}));
  const Model m = read_model(p);
  const auto& l = m.layer_types.at(0);
  CHECK(spelling(l.encoding).rfind("rope:dim=128,base=10000", 0) == 0);  // 4096 / 32 dims, all rotating
  const std::string notes = layer_notes(m, l);
  CHECK(notes.find("llama.rope.dimension_count absent: llama.cpp rotates the whole head (128)") != std::string::npos);
  CHECK(notes.find("llama.rope.freq_base absent: llama.cpp's default 10000") != std::string::npos);
}

TEST_CASE("GGUF: a key or a tensor given twice, and an unaligned tensor offset, are refused as ggml refuses them") {
  test::ScratchDir dir("gguf-dup");
  auto u32 = kLlama;
  u32.push_back({"llama.attention.head_count", 8});
  const std::string d = dir.write("d.gguf", gguf({}, u32, {{"general.architecture", "llama"}}, {}));
  CHECK(refused(d).find("key 'llama.attention.head_count' given twice (each key once: ggml refuses the file)") !=
        std::string::npos);
  const std::vector<float> ones(64, 1.0f);
  const std::string t = dir.write("t.gguf", gguf({}, kLlama, {{"general.architecture", "llama"}},
                                                 {{"rope_freqs.weight", ones}, {"rope_freqs.weight", ones}}));
  CHECK(refused(t).find("tensor 'rope_freqs.weight' given twice") != std::string::npos);
  // rope_freqs 4 bytes past an aligned start: the reader used to take the bytes there and say "rope_freqs = 0".
  const std::string u = dir.write("u.gguf", gguf({}, kLlama, {{"general.architecture", "llama"}},
                                                 {{"rope_freqs.weight", ones}}, {}, 4));
  const auto why = refused(u);
  CHECK(why.find("tensor 'rope_freqs.weight' at offset 4 (must be a multiple of the alignment 32") != std::string::npos);
  CHECK(why.find("rope_freqs = 0") == std::string::npos);
  // Aligned, the same tensor reads: 64 factors of 1 leave the 128-dim head's frequencies as they are.
  const std::string ok = dir.write("ok.gguf", gguf({}, kLlama, {{"general.architecture", "llama"}}, {{"rope_freqs.weight", ones}}));
  CHECK(refused(ok).empty());
}

// llama.cpp's per-architecture reading (src/llama-model.cpp llama_model::load_hparams and llama_model_rope_type,
// src/llama-hparams.cpp set_swa_pattern: layer il slides iff il % n < n - 1; the graphs in src/models/). Each expected
// value below is written from those rules, not from the reader.
namespace {

const LayerType& type_named(const Model& m, const std::string& name) {
  for (const auto& l : m.layer_types)
    if (l.name == name) return l;
  FAIL("no layer type " << name);
  throw;
}

// Encodings compare by their spellings, which print every field of the value.
Encoding plain_rope(int dim, double base, double partial = 1) {
  Geometric g{dim, base};
  g.partial = partial;
  g.count = default_count(g);
  enc::Rope r;
  r.freqs.source = g;
  return {r};
}

}  // namespace

TEST_CASE("GGUF gemma3: 29 sliding layers at base 1e4 unscaled, 5 global at 1e6 / 8, as llama.cpp's loader hard-codes") {
  // gemma3: set_swa_pattern(6) (layers 5, 11, ..., 29 global), rope_freq_base_train_swa = 10000 and
  // rope_freq_scale_train_swa = 1 whatever the file says; sliding_window required; NEOX pairs.
  test::ScratchDir dir("gguf-gemma3");
  const std::string p = dir.write(
      "g.gguf", gguf({{"gemma3.rope.freq_base", 1000000.0f}, {"gemma3.rope.scaling.factor", 8.0f}},
                     {{"gemma3.attention.head_count", 8}, {"gemma3.attention.key_length", 256},
                      {"gemma3.embedding_length", 2560}, {"gemma3.block_count", 34}, {"gemma3.context_length", 131072},
                      {"gemma3.attention.sliding_window", 1024}},
                     {{"general.architecture", "gemma3"}, {"gemma3.rope.scaling.type", "linear"}}, {}));
  const Model m = read_model(p);
  REQUIRE(m.layer_types.size() == 2);
  const auto& s = type_named(m, "sliding_attention");
  const auto& f = type_named(m, "full_attention");
  CHECK(s.layers == 29);
  CHECK(f.layers == 5);
  CHECK(spelling(s.encoding) == spelling(plain_rope(256, 10000)));
  Encoding global = plain_rope(256, 1e6);
  std::get<enc::Rope>(global.value).freqs.scaling = scaling::Linear{8};
  CHECK(spelling(f.encoding) == spelling(global));
  CHECK(s.window == Window{Window::Kind::sliding, 1024});
  CHECK(f.window == Window{});
  CHECK(s.pairing == Pairing::half);
  // Not the 27B (62 layers): the query is scaled by 1/sqrt(head_dim), as the default 1/sqrt(head_dim) would.
  CHECK(s.softmax_scale == 1);
  // transformers reads Gemma 3 4B's config.json the same way (29 sliding at 1e4, 5 global at 1e6 x linear 8).
  const Model hf = read_model(test::source_path("data/models/gemma-3-4b.json"));
  CHECK(spelling(type_named(hf, "sliding_attention").encoding) == spelling(s.encoding));
  CHECK(spelling(type_named(hf, "full_attention").encoding) == spelling(f.encoding));
  CHECK(type_named(hf, "sliding_attention").layers == 29);
}

TEST_CASE("GGUF gemma3 27B: the query scaled by 1/sqrt(n_embd / n_head), and sliding_window required") {
  // f_attention_scale = 1/sqrt(5376 / 32) = 1/sqrt(168) for the 62-layer model: the logits are sqrt(128 / 168) of
  // 1/sqrt(head_dim)'s (transformers: query_pre_attn_scalar 168).
  test::ScratchDir dir("gguf-gemma3-27");
  const std::string p = dir.write(
      "g.gguf", gguf({{"gemma3.rope.freq_base", 1000000.0f}},
                     {{"gemma3.attention.head_count", 32}, {"gemma3.attention.key_length", 128},
                      {"gemma3.embedding_length", 5376}, {"gemma3.block_count", 62}, {"gemma3.context_length", 131072}},
                     {{"general.architecture", "gemma3"}}, {}));
  const Model m = read_model(p);
  CHECK(m.layer_types.at(0).softmax_scale == doctest::Approx(std::sqrt(128.0 / 168.0)).epsilon(1e-15));
  CHECK(m.notes.at(0) == "llama.cpp refuses this file: gemma3.attention.sliding_window is missing (llama.cpp's loader "
                         "requires it for gemma3)");
}

TEST_CASE("GGUF gemma2: even layers slide, n_swa 4096 when the key is absent, both at the global base") {
  test::ScratchDir dir("gguf-gemma2");
  const std::string p = dir.write(
      "g.gguf", gguf({{"gemma2.rope.freq_base", 10000.0f}},
                     {{"gemma2.attention.head_count", 16}, {"gemma2.attention.key_length", 256},
                      {"gemma2.embedding_length", 3584}, {"gemma2.block_count", 42}, {"gemma2.context_length", 8192}},
                     {{"general.architecture", "gemma2"}}, {}));
  const Model m = read_model(p);
  const auto& s = type_named(m, "sliding_attention");
  CHECK(s.layers == 21);
  CHECK(type_named(m, "full_attention").layers == 21);
  CHECK(s.window == Window{Window::Kind::sliding, 4096});
  CHECK(spelling(s.encoding) == spelling(type_named(m, "full_attention").encoding));
  CHECK(layer_notes(m, s).find("soft-capped by llama.cpp: c tanh(x / c), c = 50") != std::string::npos);
}

TEST_CASE("GGUF gpt-oss: alternating sliding layers are a layer type, YaRN on both, NEOX pairs") {
  // gpt-oss: set_swa_pattern(2), sliding_window required, the sliding layers at the global base and scale; YaRN's
  // cos/sin factor attn_factor x mscale(32) = 1 + 0.1 ln 32 (llama_context with rope_yarn's mscale).
  test::ScratchDir dir("gguf-gptoss");
  const std::string p = dir.write(
      "o.gguf", gguf({{"gpt-oss.rope.freq_base", 150000.0f}, {"gpt-oss.rope.scaling.factor", 32.0f}},
                     {{"gpt-oss.attention.head_count", 64}, {"gpt-oss.attention.key_length", 64},
                      {"gpt-oss.embedding_length", 2880}, {"gpt-oss.block_count", 24}, {"gpt-oss.context_length", 131072},
                      {"gpt-oss.rope.scaling.original_context_length", 4096}, {"gpt-oss.attention.sliding_window", 128}},
                     {{"general.architecture", "gpt-oss"}, {"gpt-oss.rope.scaling.type", "yarn"}}, {}));
  const Model m = read_model(p);
  const auto& s = type_named(m, "sliding_attention");
  const auto& f = type_named(m, "full_attention");
  CHECK(s.layers == 12);
  CHECK(f.layers == 12);
  CHECK(s.window == Window{Window::Kind::sliding, 128});
  CHECK(spelling(s.encoding) == spelling(f.encoding));
  CHECK(s.pairing == Pairing::half);
  CHECK(s.attention_factor == doctest::Approx(1 + 0.1 * std::log(32.0)).epsilon(1e-15));
  CHECK(s.softmax_scale == 1);  // kq_scale 1/sqrt(n_rot), n_rot = the head size
  const auto& y = std::get<scaling::Yarn>(std::get<enc::Rope>(s.encoding.value).freqs.scaling);
  CHECK(y.orig == 4096);
  CHECK(*y.factor == 32);
}

TEST_CASE("GGUF llama4: chunked layers of 8192 with RoPE, every 4th layer full and NoPE with the query temperature") {
  // llama4: CHUNKED, n_swa = 8192 (hard-coded), set_swa_pattern(4); n_no_rope_layer_step 4: (il + 1) % 4 == 0 skips
  // RoPE; the NoPE layers' query times 0.1 ln(1 + floor((p + 1)/8192)) + 1; NORM pairs.
  test::ScratchDir dir("gguf-llama4");
  auto u32 = std::vector<std::pair<std::string, std::uint32_t>>{
      {"llama4.attention.head_count", 40}, {"llama4.attention.key_length", 128}, {"llama4.embedding_length", 5120},
      {"llama4.block_count", 48}, {"llama4.context_length", 10485760}};
  const std::string p = dir.write("s.gguf", gguf({{"llama4.rope.freq_base", 500000.0f}}, u32, {{"general.architecture", "llama4"}}, {}));
  const Model m = read_model(p);
  REQUIRE(m.layer_types.size() == 2);
  const auto& c = type_named(m, "chunked_attention");
  const auto& f = type_named(m, "full_attention");
  CHECK(c.layers == 36);
  CHECK(f.layers == 12);
  CHECK(c.window == Window{Window::Kind::chunked, 8192});
  CHECK(spelling(c.encoding) == spelling(plain_rope(128, 500000)));
  CHECK(std::holds_alternative<enc::Nope>(f.encoding.value));
  REQUIRE(f.temperature);
  CHECK(f.temperature->floor_scale == 8192);
  CHECK(f.temperature->attn_scale == 0.1);
  CHECK(c.pairing == Pairing::adjacent);
  // sliding_window = 0: no chunks, and only the last layer skips RoPE (n_no_rope_layer_step = n_layer).
  u32.push_back({"llama4.attention.sliding_window", 0});
  const std::string q = dir.write("z.gguf", gguf({{"llama4.rope.freq_base", 500000.0f}}, u32, {{"general.architecture", "llama4"}}, {}));
  const Model z = read_model(q);
  CHECK(type_named(z, "full_attention").layers == 47);
  CHECK(type_named(z, "full_attention/nope").layers == 1);
  CHECK_FALSE(type_named(z, "full_attention/nope").temperature);
}

TEST_CASE("GGUF cohere2 and smollm3: NoPE layers where llama.cpp's graphs skip RoPE") {
  // cohere2: set_swa_pattern(4), RoPE on the sliding layers only (cohere2-iswa.cpp); smollm3: (il + 1) % 4 == 0 NoPE.
  test::ScratchDir dir("gguf-nope");
  const std::string c = dir.write(
      "c.gguf", gguf({{"cohere2.rope.freq_base", 50000.0f}},
                     {{"cohere2.attention.head_count", 32}, {"cohere2.embedding_length", 4096}, {"cohere2.block_count", 32},
                      {"cohere2.context_length", 131072}, {"cohere2.attention.sliding_window", 4096}},
                     {{"general.architecture", "cohere2"}}, {}));
  const Model cm = read_model(c);
  CHECK(type_named(cm, "sliding_attention").layers == 24);
  CHECK(type_named(cm, "full_attention").layers == 8);
  CHECK(std::holds_alternative<enc::Nope>(type_named(cm, "full_attention").encoding.value));
  CHECK(type_named(cm, "sliding_attention").pairing == Pairing::adjacent);
  const std::string s = dir.write(
      "s.gguf", gguf({{"smollm3.rope.freq_base", 5000000.0f}},
                     {{"smollm3.attention.head_count", 16}, {"smollm3.embedding_length", 2048}, {"smollm3.block_count", 36},
                      {"smollm3.context_length", 65536}},
                     {{"general.architecture", "smollm3"}}, {}));
  const Model sm = read_model(s);
  CHECK(type_named(sm, "full_attention").layers == 27);
  CHECK(type_named(sm, "full_attention/nope").layers == 9);
  // transformers' SmolLM3 (data/models/smollm3-3b.json) has the same split.
  const Model hf = read_model(test::source_path("data/models/smollm3-3b.json"));
  CHECK(type_named(hf, "full_attention/nope").layers == 9);
}

TEST_CASE("GGUF qwen2 YaRN: attn_factor in the attention factor, the beta keys unused, orig from context_length") {
  // llama_context: cos/sin carry attn_factor x (1 + 0.1 ln s) = 0.8 x (1 + 0.1 ln 4) = 0.911; qwen2's loader reads no
  // beta keys (32 and 1 run); no original_context_length: n_ctx_orig_yarn = n_ctx_train.
  test::ScratchDir dir("gguf-qwen2");
  const std::string p = dir.write(
      "q.gguf", gguf({{"qwen2.rope.freq_base", 1000000.0f}, {"qwen2.rope.scaling.factor", 4.0f},
                      {"qwen2.rope.scaling.attn_factor", 0.8f}, {"qwen2.rope.scaling.yarn_beta_fast", 16.0f}},
                     {{"qwen2.attention.head_count", 28}, {"qwen2.embedding_length", 3584}, {"qwen2.block_count", 28},
                      {"qwen2.context_length", 32768}},
                     {{"general.architecture", "qwen2"}, {"qwen2.rope.scaling.type", "yarn"}}, {}));
  const Model m = read_model(p);
  const auto& l = m.layer_types.at(0);
  // attn_factor is stored as float32 0.8 (relative 3e-8).
  CHECK(l.attention_factor == doctest::Approx(0.8 * (1 + 0.1 * std::log(4.0))).epsilon(1e-7));
  CHECK(l.attention_factor == doctest::Approx(0.911).epsilon(1e-3));  // the figure, to its 3 digits
  const auto& y = std::get<scaling::Yarn>(std::get<enc::Rope>(l.encoding.value).freqs.scaling);
  CHECK(y.beta_fast == 32);
  CHECK(y.orig == 32768);
  CHECK(l.pairing == Pairing::half);
  const std::string notes = layer_notes(m, l);
  CHECK(notes.find("qwen2.rope.scaling.yarn_beta_fast = 16 unused") != std::string::npos);
  CHECK(notes.find("original_context_length absent: llama.cpp takes context_length 32768") != std::string::npos);
}

TEST_CASE("GGUF llama: a factor without a type is linear, attn_factor scales every type, n_rot must be the head") {
  test::ScratchDir dir("gguf-llama");
  const std::string p = dir.write(
      "l.gguf", gguf({{"llama.rope.freq_base", 10000.0f}, {"llama.rope.scaling.factor", 4.0f},
                      {"llama.rope.scaling.attn_factor", 0.5f}},
                     {{"llama.attention.head_count", 32}, {"llama.embedding_length", 4096}, {"llama.block_count", 32},
                      {"llama.context_length", 16384}, {"llama.rope.dimension_count", 64}},
                     {{"general.architecture", "llama"}}, {}));
  const Model m = read_model(p);
  const auto& l = m.layer_types.at(0);
  CHECK(std::get<scaling::Linear>(std::get<enc::Rope>(l.encoding.value).freqs.scaling).factor == 4);
  CHECK(l.attention_factor == 0.5);
  CHECK(l.pairing == Pairing::adjacent);
  CHECK(m.notes.at(0) == "llama.cpp refuses this file: invalid n_rot: 64, expected 128 (llama.cpp's loader requires "
                         "llama.rope.dimension_count = the head size for llama)");
  CHECK(layer_notes(m, l).find("rope.scaling.type absent: llama.cpp's default linear") != std::string::npos);
}

TEST_CASE("GGUF gptneox and phi3: partial rotary without a word, Phi-3's window switched off, LongRoPE's attn_factor") {
  test::ScratchDir dir("gguf-neox");
  const std::string n = dir.write(
      "n.gguf", gguf({{"gptneox.rope.freq_base", 10000.0f}},
                     {{"gptneox.attention.head_count", 16}, {"gptneox.embedding_length", 2048}, {"gptneox.block_count", 24},
                      {"gptneox.context_length", 2048}, {"gptneox.rope.dimension_count", 32}},
                     {{"general.architecture", "gptneox"}}, {}));
  const Model nm = read_model(n);
  CHECK(nm.notes.empty());
  CHECK(spelling(nm.layer_types.at(0).encoding) == spelling(plain_rope(128, 10000, 0.25)));
  CHECK(nm.layer_types.at(0).rotary_dims == 32);
  // transformers' Pythia 1.4B (rotary_pct 0.25 of 128) rotates the same 32 dims.
  CHECK(read_model(test::source_path("data/models/pythia-1.4b.json")).layer_types.at(0).rotary_dims == 32);
  const std::vector<float> shorts(48, 1.0f), longs(48, 2.0f);
  const std::string p = dir.write(
      "p.gguf", gguf({{"phi3.rope.freq_base", 10000.0f}, {"phi3.rope.scaling.attn_factor", 1.19f}},
                     {{"phi3.attention.head_count", 32}, {"phi3.embedding_length", 3072}, {"phi3.block_count", 32},
                      {"phi3.context_length", 131072}, {"phi3.rope.scaling.original_context_length", 4096},
                      {"phi3.attention.sliding_window", 262144}},
                     {{"general.architecture", "phi3"}, {"phi3.rope.scaling.type", "longrope"}},
                     {{"rope_factors_long.weight", longs}, {"rope_factors_short.weight", shorts}}));
  const Model pm = read_model(p);
  REQUIRE(pm.layer_types.size() == 1);
  const auto& l = pm.layer_types.at(0);
  CHECK(l.window == Window{});
  CHECK(l.attention_factor == doctest::Approx(1.19).epsilon(1e-7));  // float32 1.19
  CHECK(layer_notes(pm, l).find("llama.cpp disables Phi-3's sliding window (PR 13676)") != std::string::npos);
}

TEST_CASE("GGUF: an architecture llama.cpp does not know, and per-layer head counts with layers without attention") {
  test::ScratchDir dir("gguf-arch");
  const std::string u = dir.write(
      "u.gguf", gguf({}, {{"mystery.attention.head_count", 8}, {"mystery.embedding_length", 512},
                          {"mystery.block_count", 4}, {"mystery.context_length", 2048}},
                     {{"general.architecture", "mystery"}}, {}));
  const Model um = read_model(u);
  CHECK(um.notes.at(0).rfind("llama.cpp refuses this file: general.architecture = 'mystery': llama.cpp knows no such "
                             "architecture", 0) == 0);
  // head_count per layer (get_key_or_arr): layers 0 and 2 recurrent (0 heads), 1 and 3 attention; the head size
  // from layer 0 needs key_length then.
  const std::string h = dir.write(
      "h.gguf", gguf({}, {{"granitehybrid.attention.key_length", 64}, {"granitehybrid.embedding_length", 1024},
                          {"granitehybrid.block_count", 4}, {"granitehybrid.context_length", 4096}},
                     {{"general.architecture", "granitehybrid"}}, {}, {}, 0,
                     {{"granitehybrid.attention.head_count", {0, 16, 0, 16}}}));
  const Model hm = read_model(h);
  CHECK(hm.layer_types.at(0).layers == 2);
  CHECK(hm.layer_types.at(0).head_dim == 64);
  CHECK(hm.notes.at(0) == "2 of 4 layers have no attention heads (attention.head_count 0)");
  // An array of another length than block_count is refused as llama.cpp refuses it.
  const std::string bad = dir.write(
      "b.gguf", gguf({}, {{"granitehybrid.attention.key_length", 64}, {"granitehybrid.embedding_length", 1024},
                          {"granitehybrid.block_count", 4}},
                     {{"general.architecture", "granitehybrid"}}, {}, {}, 0,
                     {{"granitehybrid.attention.head_count", {16, 16}}}));
  CHECK(refused(bad).find("an array of 2 values (must be block_count = 4 values") != std::string::npos);
  // float32 counts: llama.cpp's get_key_or_arr refuses the element type ("has wrong array element type").
  const std::string floats = dir.write(
      "f.gguf", gguf({}, {{"granitehybrid.attention.key_length", 64}, {"granitehybrid.embedding_length", 1024},
                          {"granitehybrid.block_count", 2}},
                     {{"general.architecture", "granitehybrid"}}, {}, {{"granitehybrid.attention.head_count", {16, 16}}}));
  CHECK(refused(floats).find("granitehybrid.attention.head_count = an array of float32 (must be an array of uint32, "
                             "int32 or bool") != std::string::npos);
}
