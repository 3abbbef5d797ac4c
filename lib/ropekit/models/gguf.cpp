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
#include "ropekit/models/gguf_arch.hpp"

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

GgufValue read_value(Cursor& c, std::uint32_t type, const std::string& key, std::uint32_t& element_type) {
  if (type == STRING) return c.string(fmt::format("the string value of '{}'", key), kMaxStringBytes);
  if (type == BOOL) {
    const auto b = c.read<std::uint8_t>("a bool");
    if (b > 1) c.bad(fmt::format("'{}' = {} (a bool must be 0 or 1)", key, b));
    return b == 1;
  }
  if (type == ARRAY) {
    const auto et = c.read<std::uint32_t>("an array's element type");
    element_type = et;
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
    std::uint32_t element = 0;
    g.metadata[key] = read_value(c, type, key, element);
    if (type == ARRAY) g.element_types[key] = element;
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

namespace {

// Integers as llama.cpp's loader keeps them (uint32), in a range ropekit can use.
int positive_int(const std::string& source, const std::string& key, double v) {
  if (!(v >= 1 && v <= (1 << 20) && std::floor(v) == v)) throw_bad_value(source, key, format_number(v), "an integer in [1, 1048576]");
  return static_cast<int>(v);
}

// attention.head_count: a uint32, or an array of exactly block_count integers (get_key_or_arr: uint32, int32 or
// bool elements), one per layer; 0 marks a layer without attention (a recurrent layer of a hybrid model).
std::vector<int> head_counts(const GgufFile& g, const std::string& key, std::optional<int> n_layer, const std::string& source) {
  const auto it = g.metadata.find(key);
  if (it == g.metadata.end())
    throw InputError(fmt::format("{}: {} is missing (llama.cpp's loader needs it too)", source, key));
  if (g.types.at(key) != ARRAY) {
    const auto v = number(g, key, U32, source);
    return std::vector<int>(static_cast<std::size_t>(n_layer.value_or(1)), positive_int(source, key, *v));
  }
  // get_key_or_arr into uint32 counts takes uint32, int32 or bool elements ("has wrong array element type").
  if (const auto et = g.element_types.find(key); et != g.element_types.end() && et->second != U32 && et->second != I32 && et->second != BOOL)
    throw_bad_value(source, key, fmt::format("an array of {}", gguf_type_name(et->second)),
                    "an array of uint32, int32 or bool, as llama.cpp's loader reads it");
  const auto& v = std::get<std::vector<double>>(it->second);
  if (!n_layer) throw_bad_value(source, key, "an array", "a uint32 (an array needs block_count: one count per layer)");
  if (static_cast<int>(v.size()) != *n_layer)
    throw_bad_value(source, key, fmt::format("an array of {} values", v.size()),
                    fmt::format("block_count = {} values, as llama.cpp's get_key_or_arr reads it", *n_layer));
  std::vector<int> out;
  for (const double h : v) {
    if (!(h >= 0 && h <= (1 << 20) && std::floor(h) == h)) throw_bad_value(source, key, format_number(h), "integers in [0, 1048576]");
    out.push_back(static_cast<int>(h));
  }
  return out;
}

// The frequency schedule every rotary layer shares unless its architecture says otherwise, with what llama.cpp
// multiplies cos and sin by (its cparams.yarn_attn_factor times rope_yarn's mscale) and the softmax multiplier.
struct GlobalRope {
  FrequencySchedule schedule;
  double cos_sin_factor = 1;      ///< beyond what the schedule's own attention factor says (linear, none, explicit)
  double yarn_mscale_cancel = 1;  ///< 1 / (1 + 0.1 ln s) under YaRN: a layer at scale 1 keeps only this
  double softmax_scale = 1;
};

}  // namespace

Model model_from_gguf(const GgufFile& g, const std::string& source) {
  Model m;
  m.source = source;
  m.format = fmt::format("GGUF v{}", g.version);
  const auto arch_name = text(g, "general.architecture", source);
  if (!arch_name) throw InputError(fmt::format("{}: general.architecture is missing (every GGUF names its architecture)", source));
  m.model_type = *arch_name;
  const std::string a = *arch_name + ".";
  // Where llama.cpp would refuse the file, ropekit reads it but says so first.
  std::vector<std::string> refusals;
  const auto known = gguf_arch(*arch_name);
  if (!known)
    refusals.push_back(fmt::format("general.architecture = '{}': llama.cpp knows no such architecture (its loader "
                                   "throws \"unknown model architecture\"); read with its general keys only",
                                   *arch_name));
  GgufArch arch = known.value_or(GgufArch{});
  for (const char* k : {"context_length", "embedding_length", "block_count"})
    if (!g.metadata.count(a + k)) refusals.push_back(fmt::format("{}{} is missing (llama.cpp's loader requires it)", a, k));

  if (const auto ctx = number(g, a + "context_length", U32, source)) {
    if (!(*ctx >= 1 && *ctx <= 9007199254740992.0 && std::floor(*ctx) == *ctx))  // NaN fails too
      throw_bad_value(source, a + "context_length", format_number(*ctx), "an integer in [1, 2^53]");
    m.context_length = static_cast<std::int64_t>(*ctx);
  }
  std::optional<int> n_layer;
  if (const auto b = number(g, a + "block_count", U32, source)) n_layer = positive_int(source, a + "block_count", *b);
  const std::vector<int> heads = head_counts(g, a + "attention.head_count", n_layer, source);
  // llama_model::load_hparams: key_length defaults to n_embd / n_head(0), n_rot to key_length.
  int head_dim = 0;
  if (const auto k = number(g, a + "attention.key_length", U32, source)) {
    head_dim = positive_int(source, a + "attention.key_length", *k);
  } else {
    const auto e = number(g, a + "embedding_length", U32, source);
    if (!e) throw InputError(fmt::format("{}: {}embedding_length is missing (llama.cpp's loader needs it too)", source, a));
    if (heads[0] == 0)
      throw_bad_value(source, a + "attention.head_count", "0 at layer 0",
                      "> 0 at layer 0 or attention.key_length given (llama.cpp reads no head size then)");
    head_dim = positive_int(source, a + "embedding_length", *e) / heads[0];
    if (head_dim < 1) throw_bad_value(source, a + "embedding_length", format_number(*e), "at least attention.head_count");
  }
  std::vector<std::string> defaults;
  const auto rot_key = number(g, a + "rope.dimension_count", U32, source);
  const int rot = rot_key ? positive_int(source, a + "rope.dimension_count", *rot_key) : head_dim;
  if (!rot_key) defaults.push_back(fmt::format("{}rope.dimension_count absent: llama.cpp rotates the whole head ({})", a, head_dim));
  if (rot % 2 || rot > head_dim)
    throw_bad_value(source, a + "rope.dimension_count", std::to_string(rot), fmt::format("an even number <= the head dim {}", head_dim));
  if (arch.rot_is_head && rot != head_dim)
    refusals.push_back(fmt::format("invalid n_rot: {}, expected {} (llama.cpp's loader requires {}rope.dimension_count "
                                   "= the head size for {})", rot, head_dim, a, arch.name));
  const auto base_key = number(g, a + "rope.freq_base", F32, source);
  const double base = base_key.value_or(10000.0);
  if (!base_key) defaults.push_back(fmt::format("{}rope.freq_base absent: llama.cpp's default 10000", a));
  if (!(base > 0) || !std::isfinite(base)) throw_bad_value(source, a + "rope.freq_base", format_number(base), "finite and > 0");

  // The scaling as llama.cpp's loader and context read it: the type defaults to linear; the factor is
  // rope.scaling.factor, else the older rope.scale_linear, 0 meaning none; type none never scales.
  const auto type_key = text(g, a + "rope.scaling.type", source);
  const std::string type = type_key.value_or("linear");
  if (type != "none" && type != "linear" && type != "yarn" && type != "longrope")
    throw_bad_value(source, a + "rope.scaling.type", "'" + type + "'",
                    "none, linear, yarn or longrope (llama.cpp aborts on any other)");
  auto factor = number(g, a + "rope.scaling.factor", F32, source);
  if (!factor) factor = number(g, a + "rope.scale_linear", F32, source);
  double s = factor && *factor != 0 ? *factor : 1;
  if (!(s > 0) || !std::isfinite(s)) throw_bad_value(source, a + "rope.scaling.factor", format_number(s), "finite and > 0 (0: none)");
  if (type == "none" && s != 1) {
    defaults.push_back(fmt::format("rope.scaling.factor = {} unused: rope.scaling.type none (llama.cpp never scales then)",
                                   format_number(s)));
    s = 1;
  }
  if (!type_key && s != 1) defaults.push_back("rope.scaling.type absent: llama.cpp's default linear");
  const auto orig_key = number(g, a + "rope.scaling.original_context_length", U32, source);
  const double raf = number(g, a + "rope.scaling.attn_factor", F32, source).value_or(1);
  if (!(raf > 0) || !std::isfinite(raf)) throw_bad_value(source, a + "rope.scaling.attn_factor", format_number(raf), "finite and > 0");
  for (const char* k : {"rope.scaling.yarn_beta_fast", "rope.scaling.yarn_beta_slow"})
    if (const auto v = number(g, a + k, F32, source); v && !arch.yarn_betas)
      defaults.push_back(fmt::format("{}{} = {} unused: llama.cpp's loader reads the beta keys for grok only (32 and 1 run)",
                                     a, k, format_number(*v)));
  const auto log_mul = number(g, a + "rope.scaling.yarn_log_multiplier", F32, source);
  if (log_mul && !arch.yarn_log_multiplier)
    defaults.push_back(fmt::format("{}rope.scaling.yarn_log_multiplier = {} unused: llama.cpp reads it for DeepSeek-V2/V3 "
                                   "and their kin only", a, format_number(*log_mul)));

  GlobalRope global;
  Geometric geometric{head_dim, base};
  if (rot != head_dim) geometric.partial = static_cast<double>(rot) / head_dim;
  geometric.count = default_count(geometric);  // F = ceil(r/2), as the spelling's parser fills it
  const bool yarn = type == "yarn" && s != 1;  // llama.cpp's ext_factor: 1 under YaRN (scale 1 leaves it inert)
  const auto orig = [&](const char* scheme) {
    if (orig_key) return *orig_key;
    if (!m.context_length)
      throw InputError(fmt::format("{}: {} needs {}rope.scaling.original_context_length or {}context_length", source, scheme, a, a));
    defaults.push_back(fmt::format("{}rope.scaling.original_context_length absent: llama.cpp takes context_length {}", a,
                                   *m.context_length));
    return static_cast<double>(*m.context_length);
  };
  if (const auto freqs = g.tensors.find("rope_freqs"); freqs != g.tensors.end()) {
    // ggml_rope_cache_init divides theta_i = base^(-2i/n) by rope_freqs[i] (Llama 3.1's scaling is stored this way),
    // then scales as the type says: linear divides by s as well; YaRN's ramp over explicit values is not modelled.
    if (static_cast<int>(freqs->second.size()) != rot / 2)
      throw_bad_value(source, "rope_freqs", fmt::format("{} values", freqs->second.size()),
                      fmt::format("rope.dimension_count / 2 = {} values", rot / 2));
    if (type == "yarn" || type == "longrope")
      throw_bad_value(source, a + "rope.scaling.type", type, "none or linear with a rope_freqs tensor (YaRN and LongRoPE over "
                      "llama.cpp's frequency factors are not modelled)");
    std::vector<double> theta;
    for (int i = 0; i < rot / 2; ++i) {
      const double f = freqs->second[static_cast<std::size_t>(i)];
      if (!(f > 0) || !std::isfinite(f)) throw_bad_value(source, "rope_freqs", format_number(f), "finite and > 0");
      theta.push_back(std::pow(base, -2.0 * i / rot) / f / s);
    }
    global.schedule.source = ExplicitFrequencies{theta};
    defaults.push_back(fmt::format("rope_freqs tensor: theta_i = base^(-2i/n) / rope_freqs[i]{} (llama.cpp's frequency factors)",
                                   s != 1 ? fmt::format(" / {}", format_number(s)) : ""));
    global.cos_sin_factor = raf;
  } else {
    global.schedule.source = geometric;
    if (type == "linear" || type == "none") {
      if (s != 1) global.schedule.scaling = scaling::Linear{s};
      global.cos_sin_factor = raf;
    } else if (type == "yarn") {
      scaling::Yarn y;
      y.factor = s, y.orig = orig("yarn");
      if (arch.yarn_betas) {  // grok: beta_fast 8 unless the file says
        y.beta_fast = number(g, a + "rope.scaling.yarn_beta_fast", F32, source).value_or(8);
        y.beta_slow = number(g, a + "rope.scaling.yarn_beta_slow", F32, source).value_or(1);
      }
      // llama_context: yarn_attn_factor = mscale(s, 1) / (1 + 0.1 ln s) x attn_factor, rope_yarn then multiplies by
      // 1 + 0.1 ln s: cos and sin carry attn_factor x mscale(s, 1). DeepSeek's graphs cancel YaRN's part instead.
      const double yarn_part = arch.yarn_log_multiplier && log_mul && *log_mul != 0 ? 1.0 : yarn_mscale(s);
      if (raf != 1 || yarn_part != yarn_mscale(s)) y.attention_factor = raf * yarn_part;
      global.yarn_mscale_cancel = yarn ? 1 / (1 + 0.1 * std::log(s)) : 1;
      if (arch.yarn_log_multiplier && log_mul && *log_mul != 0) {
        // [TAG_DEEPSEEK2_YARN_LOG_MUL_FIX]: the loader divides the converter's 0.1 x mscale_all_dim by 0.1 and the
        // graph scales the logits by (attn_factor (1 + 0.1 x' ln s))^2 / sqrt(head_k), x' = x / 0.1.
        const double x = *log_mul, now = std::pow(raf * (1 + x * std::log(s)), 2), window = std::pow(raf * (1 + 0.1 * x * std::log(s)), 2);
        if (!std::isfinite(now) || !std::isfinite(window))
          throw_bad_value(source, a + "rope.scaling.yarn_log_multiplier", format_number(x), "a finite multiplier");
        global.softmax_scale = now;
        defaults.push_back(fmt::format(
            "rope.scaling.yarn_log_multiplier = {} (the converter's 0.1 x mscale_all_dim): llama.cpp scales the logits by "
            "(attn_factor (1 + x ln s))^2 = {} and leaves cos and sin at attn_factor = {}; builds between llama.cpp PR "
            "17945 and its loader fix read (1 + 0.1 x ln s)^2 = {}",
            format_number(x), format_significant(now, 8), format_number(raf), format_significant(window, 8)));
      }
      global.schedule.scaling = y;
      defaults.push_back("llama.cpp computes YaRN with its own ramp (ropekit's --convention ggml)");
    } else {  // longrope: ggml takes the short or the long factors as frequency factors, cos and sin times attn_factor
      if (!g.tensors.count("rope_factors_long") || !g.tensors.count("rope_factors_short"))
        throw_bad_value(source, a + "rope.scaling.type", "'longrope'", "given with the rope_factors_long and rope_factors_short tensors");
      if (!m.context_length) throw InputError(fmt::format("{}: longrope needs {}context_length", source, a));
      scaling::LongRope lr;
      lr.short_factor = g.tensors.at("rope_factors_short"), lr.long_factor = g.tensors.at("rope_factors_long");
      lr.orig = orig("longrope"), lr.max = static_cast<double>(*m.context_length);
      lr.attention_factor = raf;
      global.schedule.scaling = lr;
      defaults.push_back(fmt::format("llama.cpp takes the long factors for every position once the context it allocates "
                                     "per sequence exceeds {} (llama_model::get_rope_factors), transformers only past "
                                     "that length; cos and sin times rope.scaling.attn_factor = {}",
                                     format_number(lr.orig), format_number(raf)));
    }
  }

  // The layers as the architecture lays them out: sliding or chunked (set_swa_pattern), with or without RoPE.
  std::optional<std::int64_t> window;
  const auto window_key = number(g, a + "attention.sliding_window", U32, source);
  if (arch.swa != Window::Kind::full) {
    if (arch.llama4_chunks) {  // chunked attention of 8192 (hard-coded) unless the key says 0
      if (window_key && *window_key == 0) {
        arch.swa = Window::Kind::full, arch.nope_step = n_layer.value_or(0);
        defaults.push_back(fmt::format("{}attention.sliding_window = 0: llama.cpp runs no chunked attention and skips RoPE "
                                       "in the last layer only", a));
      } else {
        window = 8192;
        if (window_key) defaults.push_back(fmt::format("{}attention.sliding_window = {} unused: llama.cpp's chunks are 8192",
                                                       a, format_number(*window_key)));
      }
    } else if (window_key) {
      window = static_cast<std::int64_t>(*window_key);
    } else if (arch.window_required) {
      refusals.push_back(fmt::format("{}attention.sliding_window is missing (llama.cpp's loader requires it for {})", a, arch.name));
    } else {
      window = arch.window_default;
      defaults.push_back(fmt::format("{}attention.sliding_window absent: llama.cpp's default {} for {}", a, arch.window_default, arch.name));
    }
    if (window && *window == 0) {
      defaults.push_back(fmt::format("{}attention.sliding_window = 0: no layer's window hides a lag", a));
      window.reset();
    }
    if (arch.swa_base_key)
      if (const auto p = number(g, a + "attention.sliding_window_pattern", U32, source)) arch.pattern = static_cast<int>(*p);
  } else if (window_key && *window_key > 0) {
    defaults.push_back(arch.phi3_swa_disabled
                           ? fmt::format("{}attention.sliding_window = {}: llama.cpp disables Phi-3's sliding window (PR "
                                         "13676), every layer sees every earlier position", a, format_number(*window_key))
                           : fmt::format("{}attention.sliding_window = {}: llama.cpp's loader does not read it for {}", a,
                                         format_number(*window_key), *arch_name));
  }
  const auto swa_base = arch.swa_base_key ? number(g, a + "rope.freq_base_swa", F32, source) : std::nullopt;
  if (swa_base && (!(*swa_base > 0) || !std::isfinite(*swa_base)))
    throw_bad_value(source, a + "rope.freq_base_swa", format_number(*swa_base), "finite and > 0");

  // The logit multiplier beyond 1/sqrt(head_dim), per architecture (each graph's kq_scale and query scaling).
  double softmax = global.softmax_scale;
  std::string softmax_note;
  if (arch.gemma_query_scale) {  // Q *= f_attention_scale, kq_scale 1
    const bool big = n_layer && *n_layer == arch.layers_27b;
    const double embd = number(g, a + "embedding_length", U32, source).value_or(head_dim * heads[0]);
    const double q = big ? embd / heads[0] : head_dim;
    softmax *= std::sqrt(head_dim / q);
    if (big) softmax_note = fmt::format("{} layers (the 27B): llama.cpp scales the query by 1/sqrt(n_embd / n_head) = "
                                        "1/sqrt({}), not 1/sqrt(head_dim {})", *n_layer, format_number(q), head_dim);
  } else if (arch.kq_scale_n_rot) {  // build_attn(..., 1/sqrtf(n_rot))
    softmax *= std::sqrt(static_cast<double>(head_dim) / rot);
  }
  if (arch.name == "gemma2")
    defaults.push_back(fmt::format("attention logits soft-capped by llama.cpp: c tanh(x / c), c = {}",
                                   format_number(number(g, a + "attn_logit_softcapping", F32, source).value_or(50))));

  const Pairing pairing = arch.rope == GgmlRopeType::norm ? Pairing::adjacent : Pairing::half;
  if (arch.rope == GgmlRopeType::unlisted && known)
    defaults.push_back(fmt::format("ropekit has no record of llama.cpp's rope type for {}: pairing taken as NEOX (half)", *arch_name));
  if (arch.rope == GgmlRopeType::mrope)
    defaults.push_back("llama.cpp's M-RoPE (rope.dimension_sections): the text tokens' positions, every section at one position");
  if (arch.rope == GgmlRopeType::none)
    defaults.push_back(fmt::format("llama.cpp applies no rotary embedding to {} (llama_model_rope_type NONE)", *arch_name));

  // One pass over the layers (one pattern period when the file gives no block count).
  struct Group {
    std::string kind;
    bool rope = true;
    int layers = 0;
  };
  std::vector<Group> groups;
  const int count = n_layer.value_or(std::max({1, arch.pattern, arch.nope_step}));
  int without_heads = 0;
  for (int il = 0; il < count; ++il) {
    if (heads[static_cast<std::size_t>(std::min<int>(il, static_cast<int>(heads.size()) - 1))] == 0) {
      ++without_heads;
      continue;
    }
    const bool slides = window && gguf_layer_slides(arch, il);
    const bool rope = arch.rope != GgmlRopeType::none && !(arch.nope_step && (il + 1) % arch.nope_step == 0) &&
                      !(arch.full_layers_nope && !slides);
    const std::string kind = !slides ? "full_attention" : arch.swa == Window::Kind::chunked ? "chunked_attention" : "sliding_attention";
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.kind == kind && x.rope == rope; });
    if (it == groups.end()) groups.push_back({kind, rope, 0}), it = groups.end() - 1;
    ++it->layers;
  }
  if (without_heads)
    m.notes.push_back(fmt::format("{} of {} layers have no attention heads (attention.head_count 0)", without_heads, count));

  for (const Group& grp : groups) {
    LayerType l;
    const bool shared = std::any_of(groups.begin(), groups.end(), [&](const Group& x) { return x.kind == grp.kind && x.rope != grp.rope; });
    l.name = grp.rope || !shared ? grp.kind : grp.kind + "/nope";
    l.layers = n_layer ? grp.layers : 0;
    l.head_dim = head_dim;
    l.pairing = pairing;
    if (grp.kind != "full_attention") l.window = {arch.swa, *window};
    double cos_sin = 1;
    if (!grp.rope) {
      l.encoding = {enc::Nope{head_dim}};
      if (arch.llama4_chunks && window) {  // llama-iswa.cpp: the NoPE layers' query times inp_attn_scale
        l.temperature = QueryTemperature{8192, 0.1};
        l.notes.push_back("query scaled by s(p) = 0.1 ln(1 + floor((p + 1)/8192)) + 1 (llama.cpp's Llama 4 "
                          "temperature): the score depends on the query position");
      }
    } else {
      enc::Rope rope;
      rope.freqs = global.schedule;
      cos_sin = global.cos_sin_factor;
      if (grp.kind != "full_attention" && arch.swa_rope_fixed) {
        // gemma3: the sliding layers at base 10000, scale 1; a YaRN file's cancelled mscale still reaches them.
        Geometric plain{head_dim, 10000};
        if (rot != head_dim) plain.partial = static_cast<double>(rot) / head_dim;
        plain.count = default_count(plain);
        rope.freqs = FrequencySchedule{};
        rope.freqs.source = plain;
        cos_sin = raf * global.yarn_mscale_cancel;
        l.notes.push_back(fmt::format("llama.cpp runs {}'s sliding layers at base 10000, unscaled (hard-coded in its loader)", arch.name));
      } else if (grp.kind != "full_attention" && swa_base) {
        std::get<Geometric>(rope.freqs.source).base = *swa_base;
        l.notes.push_back(fmt::format("{}rope.freq_base_swa = {}", a, format_number(*swa_base)));
      }
      l.encoding = {rope};
    }
    l.notes.insert(l.notes.begin(), defaults.begin(), defaults.end());
    // The value is checked as the spelling's parser checks a schedule (the scheme's key rules, list lengths).
    if (const auto* r = std::get_if<enc::Rope>(&l.encoding.value)) {
      FrequencyTable f;
      try {
        validate(r->freqs.scaling, Where(source + ": " + l.name));
        f = frequencies(l.encoding);
      } catch (const InputError& e) {
        std::string what = e.what();
        if (what.starts_with("ropekit::frequencies: ")) what.erase(0, std::string_view("ropekit::frequencies: ").size());
        throw InputError(what.starts_with(source) ? what : fmt::format("{}: {}: {}", source, l.name, what));
      }
      l.attention_factor = f.attention_factor * cos_sin;
      l.rotary_dims = 2 * static_cast<int>(f.theta.rows());
    }
    if (cos_sin != 1)
      l.notes.push_back(fmt::format("cos and sin times {} (rope.scaling.attn_factor{}; llama.cpp applies it to every scaling "
                                    "type): the score times {}",
                                    format_significant(cos_sin, 8), global.yarn_mscale_cancel != 1 && cos_sin != raf
                                        ? " over YaRN's 1 + 0.1 ln s, cancelled for a layer at scale 1" : "",
                                    format_significant(cos_sin * cos_sin, 8)));
    l.softmax_scale = softmax;
    if (!softmax_note.empty()) l.notes.push_back(softmax_note);
    m.layer_types.push_back(std::move(l));
  }
  for (auto it = refusals.rbegin(); it != refusals.rend(); ++it) m.notes.insert(m.notes.begin(), "llama.cpp refuses this file: " + *it);
  return m;
}

}  // namespace ropekit
