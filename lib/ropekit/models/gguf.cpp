#include "ropekit/models/gguf.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit {

namespace {

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");

constexpr std::uint64_t kMaxKeyBytes = 1 << 16;       // a key name
constexpr std::uint64_t kMaxStringBytes = 1 << 26;    // one string value (a chat template is ~10 KB)
constexpr std::uint64_t kMaxTensorDims = 4;           // GGML_MAX_DIMS
constexpr std::uint64_t kMaxRopeValues = 1 << 20;     // elements of a rope tensor (head_dim / 2 in practice)

enum Type : std::uint32_t {
  U8 = 0, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64,
};

// Bounded sequential reads: every length is checked against the bytes left in the file before it is read.
class Cursor {
 public:
  Cursor(std::istream& in, std::uint64_t size, const std::string& source) : path_(source), in_(in), size_(size) {}
  [[noreturn]] void bad(std::string_view what) const {
    throw InputError(fmt::format("{}: at byte {}: {}", path_, pos_, what));
  }
  void need(std::uint64_t n, std::string_view what) {
    if (n > size_ - pos_) bad(fmt::format("{} needs {} bytes, the file has {} left (truncated or corrupt)", what, n, size_ - pos_));
    if (pos_ + n > kMaxGgufMetadataBytes && !in_tensors_)
      bad(fmt::format("metadata past {} bytes (refused: a GGUF's metadata is a few MB)", kMaxGgufMetadataBytes));
  }
  template <class T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    T v;
    in_.read(reinterpret_cast<char*>(&v), sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string string(std::string_view what, std::uint64_t max) {
    const auto n = read<std::uint64_t>(what);
    if (n > max) bad(fmt::format("{} of {} bytes (at most {})", what, n, max));
    need(n, what);
    std::string s(n, '\0');
    in_.read(s.data(), static_cast<std::streamsize>(n));
    pos_ += n;
    return s;
  }
  void skip(std::uint64_t n, std::string_view what) {
    need(n, what);
    in_.seekg(static_cast<std::streamoff>(n), std::ios::cur);
    pos_ += n;
  }
  void seek(std::uint64_t at, std::string_view what) {
    in_tensors_ = true;
    if (at > size_) bad(fmt::format("{} at byte {} is past the end ({} bytes)", what, at, size_));
    in_.seekg(static_cast<std::streamoff>(at));
    pos_ = at;
  }
  std::uint64_t pos() const { return pos_; }

 private:
  std::string path_;
  std::istream& in_;
  std::uint64_t size_ = 0, pos_ = 0;
  bool in_tensors_ = false;
};

std::uint64_t scalar_size(std::uint32_t t) {
  switch (t) {
    case U8: case I8: case BOOL: return 1;
    case U16: case I16: return 2;
    case U32: case I32: case F32: return 4;
    case U64: case I64: case F64: return 8;
    default: return 0;
  }
}

double read_number(Cursor& c, std::uint32_t t) {
  switch (t) {
    case U8: return c.read<std::uint8_t>("a uint8");
    case I8: return c.read<std::int8_t>("an int8");
    case U16: return c.read<std::uint16_t>("a uint16");
    case I16: return c.read<std::int16_t>("an int16");
    case U32: return c.read<std::uint32_t>("a uint32");
    case I32: return c.read<std::int32_t>("an int32");
    case F32: return c.read<float>("a float32");
    case U64: return static_cast<double>(c.read<std::uint64_t>("a uint64"));
    case I64: return static_cast<double>(c.read<std::int64_t>("an int64"));
    case F64: return c.read<double>("a float64");
    default: c.bad(fmt::format("value type {} is not a number", t));
  }
}

GgufValue read_value(Cursor& c, std::uint32_t type, const std::string& key) {
  if (type == STRING) return c.string(fmt::format("the string value of '{}'", key), kMaxStringBytes);
  if (type == BOOL) {
    const auto b = c.read<std::uint8_t>("a bool");
    if (b > 1) c.bad(fmt::format("'{}' = {} (a bool must be 0 or 1)", key, b));
    return b == 1;
  }
  if (type == ARRAY) {
    const auto et = c.read<std::uint32_t>("an array's element type");
    const auto n = c.read<std::uint64_t>("an array's length");
    if (et == STRING) {  // vocabularies: skipped, string by string (each length checked)
      for (std::uint64_t i = 0; i < n; ++i) c.skip(c.read<std::uint64_t>("a string length"), "an array string");
      return std::vector<double>{};
    }
    const auto size = scalar_size(et);
    if (size == 0 || et == BOOL) c.bad(fmt::format("'{}': array element type {} (must be a number type)", key, et));
    if (n > (kMaxGgufMetadataBytes / size)) c.bad(fmt::format("'{}': array of {} elements (too large)", key, n));
    if (n > 4096) {  // token types, scores: not needed
      c.skip(n * size, fmt::format("the array '{}'", key));
      return std::vector<double>{};
    }
    std::vector<double> v;
    for (std::uint64_t i = 0; i < n; ++i) v.push_back(read_number(c, et));
    return v;
  }
  if (scalar_size(type) == 0) c.bad(fmt::format("'{}': value type {} (must be 0 to 12)", key, type));
  return read_number(c, type);
}

const std::set<std::string> kRopeTensors = {"rope_freqs.weight", "rope_factors_long.weight",
                                            "rope_factors_short.weight"};

}  // namespace

GgufFile read_gguf(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(fmt::format("model file = {} (must be a regular file)", quote(path)));
  const auto size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in)
    throw InputError(fmt::format("model file = {} (must be a readable file: {})", quote(path),
                                 ec ? ec.message() : "cannot open"));
  return read_gguf(in, size, path);
}

GgufFile read_gguf(std::istream& in, std::uint64_t size, const std::string& source) {
  Cursor c(in, size, source);
  GgufFile g;
  char magic[4];
  for (char& m : magic) m = static_cast<char>(c.read<std::uint8_t>("the magic 'GGUF'"));
  if (std::memcmp(magic, "GGUF", 4) != 0) c.bad("not a GGUF file (the magic is not 'GGUF')");
  g.version = c.read<std::uint32_t>("the version");
  if (g.version != 2 && g.version != 3) c.bad(fmt::format("version = {} (must be 2 or 3)", g.version));
  const auto n_tensors = c.read<std::uint64_t>("the tensor count");
  const auto n_kv = c.read<std::uint64_t>("the key-value count");
  // Each pair takes at least 8 + 4 + 1 bytes, each tensor info 8 + 4 + 8 + 4 + 8: counts beyond the file are lies.
  if (n_kv > kMaxGgufMetadataBytes / 13) c.bad(fmt::format("key-value count {} (more than the file can hold)", n_kv));
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    const std::string key = c.string("a key", kMaxKeyBytes);
    // ggml's gguf reader refuses a repeated key; taking either silently would read a file two ways.
    if (g.metadata.count(key)) c.bad(fmt::format("key '{}' given twice (each key once: ggml refuses the file)", key));
    const auto type = c.read<std::uint32_t>(fmt::format("the type of '{}'", key));
    g.metadata[key] = read_value(c, type, key);
    g.types[key] = type;
  }
  std::uint64_t alignment = 32;
  if (const auto it = g.metadata.find("general.alignment"); it != g.metadata.end()) {
    const auto* a = std::get_if<double>(&it->second);
    if (!a || *a < 1 || *a > 65536 || std::floor(*a) != *a || !std::has_single_bit(static_cast<std::uint64_t>(*a)))
      c.bad("general.alignment (must be a power of two up to 65536)");
    alignment = static_cast<std::uint64_t>(*a);
  }
  if (n_tensors > kMaxGgufMetadataBytes / 32)
    c.bad(fmt::format("tensor count {} (more than the file can hold)", n_tensors));
  struct Info {
    std::string name;
    std::uint64_t count = 1, offset = 0;
    std::uint32_t type = 0;
  };
  std::vector<Info> rope;
  std::set<std::string> names;
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    Info t;
    t.name = c.string("a tensor name", kMaxKeyBytes);
    if (!names.insert(t.name).second)
      c.bad(fmt::format("tensor '{}' given twice (each tensor once: ggml refuses the file)", t.name));
    const auto dims = c.read<std::uint32_t>("a tensor's dimension count");
    if (dims == 0 || dims > kMaxTensorDims) c.bad(fmt::format("tensor '{}': {} dimensions (must be 1 to 4)", t.name, dims));
    for (std::uint32_t d = 0; d < dims; ++d) {
      const auto n = c.read<std::uint64_t>("a tensor dimension");
      if (n == 0 || t.count > (std::uint64_t{1} << 62) / n) c.bad(fmt::format("tensor '{}': dimension {}", t.name, n));
      t.count *= n;
    }
    t.type = c.read<std::uint32_t>("a tensor type");
    t.offset = c.read<std::uint64_t>("a tensor offset");
    // ggml: every tensor's data starts at a multiple of the alignment (reading an unaligned one takes other bytes).
    if (t.offset % alignment)
      c.bad(fmt::format("tensor '{}' at offset {} (must be a multiple of the alignment {}: ggml refuses the file)", t.name,
                        t.offset, alignment));
    if (kRopeTensors.count(t.name)) rope.push_back(t);
  }
  const std::uint64_t data = (c.pos() + alignment - 1) / alignment * alignment;
  for (const auto& t : rope) {
    if (t.type != 0) c.bad(fmt::format("tensor '{}' has ggml type {} (a rope tensor is F32, type 0)", t.name, t.type));
    if (t.count > kMaxRopeValues) c.bad(fmt::format("tensor '{}' has {} elements (too many for a rope tensor)", t.name, t.count));
    if (t.offset > (std::uint64_t{1} << 62)) c.bad(fmt::format("tensor '{}': offset {}", t.name, t.offset));
    c.seek(data + t.offset, fmt::format("tensor '{}'", t.name));
    std::vector<double> v;
    for (std::uint64_t i = 0; i < t.count; ++i) v.push_back(c.read<float>(fmt::format("tensor '{}'", t.name)));
    g.tensors[t.name.substr(0, t.name.find('.'))] = v;
  }
  return g;
}

std::string gguf_type_name(std::uint32_t type) {
  static const char* const names[] = {"uint8", "int8",   "uint16", "int16", "uint32", "int32", "float32",
                                      "bool",  "string", "array",  "uint64", "int64", "float64"};
  return type < std::size(names) ? names[type] : fmt::format("type {}", type);
}

namespace {

// A key's value as llama.cpp's loader reads it: of exactly the type it expects (GGUFMeta refuses any other, "key
// has wrong type"), so a string or an array where a number belongs is refused here too, never taken as absent.
const GgufValue* typed(const GgufFile& g, const std::string& key, Type want, const std::string& source) {
  const auto it = g.metadata.find(key);
  if (it == g.metadata.end()) return nullptr;
  const auto t = g.types.find(key);
  if (t == g.types.end() || t->second == want) return &it->second;
  std::string shown = "an array";
  if (const auto* d = std::get_if<double>(&it->second)) shown = format_number(*d);
  if (const auto* s = std::get_if<std::string>(&it->second)) shown = quote(*s);
  if (const auto* b = std::get_if<bool>(&it->second)) shown = *b ? "true" : "false";
  throw_bad_value(source, key, t->second == ARRAY ? shown : fmt::format("{} of type {}", shown, gguf_type_name(t->second)),
                  fmt::format("of type {}, as llama.cpp's loader reads it", gguf_type_name(want)));
}
std::optional<double> number(const GgufFile& g, const std::string& key, Type want, const std::string& source) {
  const auto* v = typed(g, key, want, source);
  if (const auto* d = v ? std::get_if<double>(v) : nullptr) return *d;
  return std::nullopt;
}
std::optional<std::string> text(const GgufFile& g, const std::string& key, const std::string& source) {
  const auto* v = typed(g, key, STRING, source);
  if (const auto* s = v ? std::get_if<std::string>(v) : nullptr) return *s;
  return std::nullopt;
}

}  // namespace

Model model_from_gguf(const GgufFile& g, const std::string& source) {
  Model m;
  m.source = source;
  m.format = fmt::format("GGUF v{}", g.version);
  const auto arch = text(g, "general.architecture", source);
  if (!arch) throw InputError(fmt::format("{}: general.architecture is missing (every GGUF names its architecture)", source));
  m.model_type = *arch;
  const std::string a = *arch + ".";
  auto need = [&](const std::string& key) {
    const auto v = number(g, a + key, U32, source);
    if (!v) throw InputError(fmt::format("{}: {}{} is missing (llama.cpp's loader needs it too)", source, a, key));
    return *v;
  };
  auto positive_int = [&](const std::string& key, double v) {
    if (!(v >= 1 && v <= (1 << 20) && std::floor(v) == v))
      throw_bad_value(source, a + key, format_number(v), "an integer in [1, 1048576]");
    return static_cast<int>(v);
  };
  if (const auto ctx = number(g, a + "context_length", U32, source)) {
    if (!(*ctx >= 1 && *ctx <= 9007199254740992.0 && std::floor(*ctx) == *ctx))  // NaN fails too
      throw_bad_value(source, a + "context_length", format_number(*ctx), "an integer in [1, 2^53]");
    m.context_length = static_cast<std::int64_t>(*ctx);
  }
  const int heads = positive_int("attention.head_count", need("attention.head_count"));
  const int head_dim = number(g, a + "attention.key_length", U32, source)
                           ? positive_int("attention.key_length", *number(g, a + "attention.key_length", U32, source))
                           : positive_int("embedding_length", need("embedding_length")) / heads;
  // Absent rope keys take llama.cpp's defaults (llama_model_loader: n_rot = the head size, freq_base 10000).
  std::vector<std::string> defaults;
  const auto rot_key = number(g, a + "rope.dimension_count", U32, source);
  const int rot = rot_key ? positive_int("rope.dimension_count", *rot_key) : head_dim;
  if (!rot_key) defaults.push_back(fmt::format("{}rope.dimension_count absent: llama.cpp rotates the whole head ({})", a, head_dim));
  if (rot % 2 || rot > head_dim)
    throw_bad_value(source, a + "rope.dimension_count", std::to_string(rot),
                    fmt::format("an even number <= the head dim {}", head_dim));
  const auto base_key = number(g, a + "rope.freq_base", F32, source);
  const double base = base_key.value_or(10000.0);
  if (!base_key) defaults.push_back(fmt::format("{}rope.freq_base absent: llama.cpp's default 10000", a));
  if (!(base > 0) || !std::isfinite(base)) throw_bad_value(source, a + "rope.freq_base", format_number(base), "finite and > 0");

  LayerType l;
  l.notes = defaults;
  l.name = "full_attention";
  l.layers = number(g, a + "block_count", U32, source) ? positive_int("block_count", *number(g, a + "block_count", U32, source)) : 0;
  l.head_dim = head_dim;
  enc::Rope rope;
  const auto freqs = g.tensors.find("rope_freqs");
  if (freqs != g.tensors.end()) {
    // llama.cpp divides theta_i = base^(-2i/n_rot) by rope_freqs[i] (Llama 3.1's scaling is stored this way).
    if (static_cast<int>(freqs->second.size()) != rot / 2)
      throw_bad_value(source, "rope_freqs", fmt::format("{} values", freqs->second.size()),
                      fmt::format("rope.dimension_count / 2 = {} values", rot / 2));
    std::vector<double> theta;
    for (int i = 0; i < rot / 2; ++i) {
      const double f = freqs->second[static_cast<std::size_t>(i)];
      if (!(f > 0) || !std::isfinite(f)) throw_bad_value(source, "rope_freqs", format_number(f), "finite and > 0");
      theta.push_back(std::pow(base, -2.0 * i / rot) / f);
    }
    rope.freqs.source = ExplicitFrequencies{theta};
    l.notes.push_back("rope_freqs tensor: theta_i = base^(-2i/n) / rope_freqs[i] (llama.cpp's frequency factors)");
  } else {
    Geometric geometric{head_dim, base};
    if (rot != head_dim) geometric.partial = static_cast<double>(rot) / head_dim;
    geometric.count = default_count(geometric);  // F = ceil(r/2), as the spelling's parser fills it
    rope.freqs.source = geometric;
    const std::string type = text(g, a + "rope.scaling.type", source).value_or("none");
    // rope.scale_linear: the factor's older name, which llama.cpp reads when rope.scaling.factor is absent.
    auto factor = number(g, a + "rope.scaling.factor", F32, source);
    if (!factor) factor = number(g, a + "rope.scale_linear", F32, source);
    const auto orig = number(g, a + "rope.scaling.original_context_length", U32, source);
    if (type == "linear" && factor) {
      rope.freqs.scaling = scaling::Linear{*factor};
    } else if (type == "yarn" && factor && orig) {
      scaling::Yarn y;
      y.factor = *factor, y.orig = *orig;
      if (const auto bf = number(g, a + "rope.scaling.yarn_beta_fast", F32, source)) y.beta_fast = *bf;
      if (const auto bs = number(g, a + "rope.scaling.yarn_beta_slow", F32, source)) y.beta_slow = *bs;
      rope.freqs.scaling = y;
      l.notes.push_back("llama.cpp computes YaRN with its own ramp (ropekit's --convention ggml)");
      // The softmax multiplier of DeepSeek-style graphs. llama.cpp today (PR 17945): mscale = 1 + 0.1 x ln s, so the
      // key x is transformers' mscale_all_dim; its graphs before that read mscale = 1 + x ln s (x = 0.1 mscale_all_dim).
      if (const auto x = number(g, a + "rope.scaling.yarn_log_multiplier", F32, source)) {
        const double ln_s = std::log(*factor), now = std::pow(1 + 0.1 * *x * ln_s, 2), before = std::pow(1 + *x * ln_s, 2);
        if (!std::isfinite(now) || !std::isfinite(before))
          throw_bad_value(source, a + "rope.scaling.yarn_log_multiplier", format_number(*x), "a finite multiplier");
        l.softmax_scale = now;
        l.notes.push_back(fmt::format(
            "rope.scaling.yarn_log_multiplier = {}: llama.cpp's DeepSeek-style graphs multiply the softmax by "
            "(1 + 0.1 x ln s)^2 = {} (x read as transformers' mscale_all_dim); before llama.cpp PR 17945 they read "
            "(1 + x ln s)^2 = {} (x = 0.1 mscale_all_dim), a factor {} apart",
            format_number(*x), format_significant(now, 8), format_significant(before, 8),
            format_significant(before / now, 8)));
      }
      if (const auto af = number(g, a + "rope.scaling.attn_factor", F32, source))
        l.notes.push_back(fmt::format("rope.scaling.attn_factor = {}: llama.cpp multiplies it into YaRN's attention "
                                      "factor (a = {} (1 + 0.1 ln s) under --convention ggml); transformers has no such key",
                                      format_number(*af), format_number(*af)));
    } else if (type == "longrope" && orig && m.context_length && g.tensors.count("rope_factors_long") &&
               g.tensors.count("rope_factors_short")) {
      scaling::LongRope lr;
      lr.short_factor = g.tensors.at("rope_factors_short"), lr.long_factor = g.tensors.at("rope_factors_long");
      lr.orig = *orig, lr.max = static_cast<double>(*m.context_length);
      rope.freqs.scaling = lr;
    } else if (type != "none") {
      throw_bad_value(source, a + "rope.scaling.type", "'" + type + "'",
                      "none, linear, yarn (with factor and original_context_length) or longrope (with its tensors)");
    }
  }
  // The value is checked as the spelling's parser checks a schedule (the scheme's key rules, list lengths).
  l.encoding = {rope};
  FrequencyTable f;
  try {
    validate(rope.freqs.scaling, Where(source + ": full_attention"));
    f = frequencies(l.encoding);
  } catch (const InputError& e) {
    std::string what = e.what();
    if (what.starts_with("ropekit::frequencies: ")) what.erase(0, std::string_view("ropekit::frequencies: ").size());
    throw InputError(what.starts_with(source) ? what : fmt::format("{}: full_attention: {}", source, what));
  }
  l.attention_factor = f.attention_factor;
  l.rotary_dims = 2 * static_cast<int>(f.theta.rows());
  if (const auto w = number(g, a + "attention.sliding_window", U32, source)) {
    l.notes.push_back(fmt::format("attention.sliding_window = {}: which layers slide is the architecture's (llama.cpp)",
                                  format_number(*w)));
  }
  m.layer_types.push_back(l);
  return m;
}

}  // namespace ropekit
