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
                 const std::vector<std::pair<std::string, std::vector<float>>>& arrays = {}, std::uint64_t shift = 0) {
  Writer w;
  w.bytes_ = "GGUF";
  w.raw<std::uint32_t>(3);
  w.raw<std::uint64_t>(tensors.size() + 1);  // + a weight tensor the reader must not read
  w.raw<std::uint64_t>(f32.size() + u32.size() + strings.size() + arrays.size() + 1);
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

TEST_CASE("GGUF: YaRN's yarn_log_multiplier in llama.cpp's two conventions, the softmax multiplier of today's") {
  // DeepSeek-V3 as a GGUF: 64 of 192 dims rotate, YaRN s = 40 from 4096; x = 1 (mscale_all_dim, llama.cpp today):
  // softmax (1 + 0.1 ln 40)^2, transformers' mscale(40, 1)^2; the older reading (1 + ln 40)^2.
  test::ScratchDir dir("gguf3");
  const std::string path = dir.write(
      "ds.gguf", gguf({{"deepseek2.rope.freq_base", 10000.0f}, {"deepseek2.rope.scaling.factor", 40.0f},
                       {"deepseek2.rope.scaling.yarn_log_multiplier", 1.0f}},
                      {{"deepseek2.attention.head_count", 128}, {"deepseek2.attention.key_length", 192},
                       {"deepseek2.rope.dimension_count", 64}, {"deepseek2.rope.scaling.original_context_length", 4096},
                       {"deepseek2.context_length", 163840}},
                      {{"general.architecture", "deepseek2"}, {"deepseek2.rope.scaling.type", "yarn"}}, {}));
  const Model m = read_model(path);
  const auto& l = m.layer_types.at(0);
  CHECK(l.head_dim == 192);
  CHECK(l.rotary_dims == 64);
  CHECK(l.softmax_scale == doctest::Approx(std::pow(0.1 * std::log(40.0) + 1, 2)).epsilon(1e-15));
  // orig comes from the file's original_context_length (a hand spelling must give it).
  CHECK(spelling(l.encoding).find("scaling=yarn(factor=40,orig=4096,") != std::string::npos);
  // The value, field by field from the keys: 64 of 192 dims rotate (partial 64/192), YaRN s = 40 from 4096 with
  // transformers' default betas (the file gives no yarn_beta_fast / yarn_beta_slow).
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
  CHECK_FALSE(y.mscale);
  CHECK_FALSE(y.max);
  const std::string notes = layer_notes(m, l);
  CHECK(notes.find("before llama.cpp PR 17945 they read (1 + x ln s)^2 = " +
                   format_significant(std::pow(1 + std::log(40.0), 2), 8)) != std::string::npos);
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
