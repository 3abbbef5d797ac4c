#include "ropekit/models/hf_config.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/models/hf_reader.hpp"
#include "ropekit/models/non_rope.hpp"

namespace ropekit {

namespace {

using json = nlohmann::json;
using hf::Reader;

constexpr int kMaxNesting = 64;       // brackets; real configs nest 3-4 deep
constexpr int kMaxTextConfigDepth = 4;  // text_config inside text_config ...
constexpr std::int64_t kMaxLayers = 1 << 20;
constexpr std::int64_t kMaxHeadDim = 1 << 16;

// The keys of a rope dict that the reader understands (transformers 5.17 _validate_*_rope_parameters).
const std::set<std::string> kRopeKeys = {
    "rope_type", "type", "rope_theta", "partial_rotary_factor", "factor", "original_max_position_embeddings",
    "low_freq_factor", "high_freq_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
    "attention_factor", "truncate", "short_factor", "long_factor", "attn_factor", "mrope_section",
    "mrope_interleaved"};


// What the file says about the whole model (the text config), read once.
struct Text {
  int head_dim = 0;            // dims the rotary module sees (DeepSeek: qk_rope_head_dim)
  int qk_dims = 0;             // q.k dims of a head (DeepSeek: qk_rope + qk_nope)
  std::optional<std::int64_t> layers, max_pos, sliding_window, chunk;
  std::optional<double> rope_theta, partial, orig_top;
  bool deepseek = false;
  std::string model_type;
  std::map<std::int64_t, int> layer_head_dim;  // per_layer_config[i].head_dim (Gemma 4)
  std::optional<int> global_head_dim;          // full-attention layers' head size (Gemma 4)
};

// Gemma 4: per_layer_config {"05": {"head_dim": 512}, ...} keyed by layer index gives some layers their own head size;
// without it, full-attention layers take global_head_dim (transformers' Gemma4TextConfig default 512).
void read_layer_head_dims(const Reader& r, const json& cfg, const std::string& model_type, Text& t) {
  if (const auto g = r.integer(cfg, "global_head_dim", 2, kMaxHeadDim)) t.global_head_dim = static_cast<int>(*g);
  else if (model_type.rfind("gemma4", 0) == 0 && !cfg.contains("per_layer_config")) t.global_head_dim = 512;
  const auto it = cfg.find("per_layer_config");
  if (it == cfg.end() || it->is_null()) return;
  if (!it->is_object()) r.bad("per_layer_config", *it, "an object keyed by layer index");
  for (const auto& [key, v] : it->items()) {
    const std::string name = "per_layer_config." + key;
    if (key.empty() || key.size() > 9 || key.find_first_not_of("0123456789") != std::string::npos)
      r.bad(name, json(key), "keyed by a layer index (digits)");
    if (!v.is_object()) r.bad(name, v, "an object");
    if (const auto hd = r.integer(v, "head_dim", 2, kMaxHeadDim)) t.layer_head_dim[std::stoll(key)] = static_cast<int>(*hd);
  }
}

// The rope dict of one layer type after transformers' standardize_rope_params: rope_type, rope_theta,
// partial_rotary_factor and original_max_position_embeddings filled from the top level where absent.
json standardized(const Reader& r, json dict, const Text& t, std::vector<std::string>& notes) {
  if (!dict.is_object()) r.bad("rope_parameters", dict, "an object (or an object per layer type)");
  if (!dict.contains("rope_type")) dict["rope_type"] = dict.contains("type") ? dict["type"] : json("default");
  if (!dict.contains("rope_theta") || dict["rope_theta"].is_null()) {
    if (t.rope_theta) {
      dict["rope_theta"] = *t.rope_theta;
    } else {
      dict["rope_theta"] = 10000.0;
      notes.push_back("rope_theta absent: transformers' default 10000 assumed");
    }
  }
  if (!dict.contains("partial_rotary_factor") && t.partial) dict["partial_rotary_factor"] = *t.partial;
  // Phi3Config: the early LongRoPE names "su" and "yarn" mean longrope.
  if (const auto old = r.string(dict, "rope_type"); t.model_type == "phi3" && (old == "su" || old == "yarn")) {
    notes.push_back(fmt::format("rope_type \"{}\" read as longrope (transformers' Phi3Config renames it)", *old));
    dict["rope_type"] = "longrope";
  }
  const auto type = r.string(dict, "rope_type").value_or("default");
  if (type == "llama3" || type == "yarn" || type == "longrope") {
    // Phi-3 keeps the pretraining length at top level; transformers gives it priority.
    if (t.orig_top) dict["original_max_position_embeddings"] = *t.orig_top;
    else if (!dict.contains("original_max_position_embeddings") && t.max_pos)
      dict["original_max_position_embeddings"] = *t.max_pos;
  }
  for (const auto& [k, v] : dict.items())
    if (!kRopeKeys.count(k)) notes.push_back(fmt::format("rope key '{}' = {} not read", k, bounded(v.dump())));
  return dict;
}

// transformers 5.17's model classes whose own compute_default_rope_parameters reads partial_rotary_factor; the
// classes in kDefaultIgnoresPartial rotate the whole head under rope_type default whatever the key says (their
// modeling files, read for this; rope types other than default go through modeling_rope_utils, which reads it).
// Phi (Phi-1, 1.5, 2): PhiAttention rotates the first int(head_dim x partial_rotary_factor) dims of q and k and passes
// the rest through, in transformers 4.x's modeling_phi.py and 5's (its rotary module's cos/sin are that wide).
const std::set<std::string> kDefaultReadsPartial = {"gpt_neox", "glm4", "phi", "phi3", "qwen3_next"};
const std::set<std::string> kDefaultIgnoresPartial = {
    "llama",  "mistral",  "ministral", "qwen2",   "qwen3",     "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "gemma2",
    "gemma3", "gemma3_text", "gemma4", "gemma4_text", "cohere2", "deepseek_v2", "deepseek_v3", "exaone4",
    "falcon_h1", "gpt_oss", "llama4", "llama4_text", "olmo2", "smollm3"};

// The RoPE of one rope dict over `dims` head dims (transformers' rotary module of that layer type), built as a value:
// the geometric grid, and the scheme's keys read through its key descriptors (scheme_from_dict).
enc::Rope rope_of(const Reader& r, const json& d, int dims, std::optional<std::int64_t> max_pos,
                  const std::string& model_type, std::vector<std::string>& notes) {
  using hf::scheme_from_dict;
  const std::string type = *r.string(d, "rope_type");
  const double theta = *r.positive(d, "rope_theta");
  Geometric g{dims, theta};
  if (const auto p = r.number(d, "partial_rotary_factor"); p && *p != 1) {
    if (type == "proportional") {
      g.partial = *p;
    } else if (type == "default" && kDefaultIgnoresPartial.count(model_type)) {
      notes.push_back(fmt::format("partial_rotary_factor = {}: transformers 5.17's {} default RoPE ignores it and "
                                  "rotates all {} dims",
                                  format_number(*p), model_type, dims));
    } else {
      g.partial = *p;
      if (type == "default" && kDefaultReadsPartial.count(model_type))
        notes.push_back(fmt::format("partial_rotary_factor = {}: transformers' {} default RoPE reads it: int({} x {}) = "
                                    "{} dims rotate, the rest pass through",
                                    format_number(*p), model_type, dims, format_number(*p),
                                    static_cast<int>(dims * *p)));
      if (type == "default" && !kDefaultReadsPartial.count(model_type))
        notes.push_back(fmt::format("partial_rotary_factor = {} read as GPT-NeoX partial rotation; whether "
                                    "transformers' {} default RoPE reads it is not known here",
                                    format_number(*p), model_type.empty() ? "(no model_type)" : model_type));
    }
  }
  g.count = default_count(g);  // F = ceil(r/2), as the spelling's parser fills it when dim is given
  // MRoPE (Qwen2-VL contiguous sections, Qwen3-VL interleaved): text tokens see 1-D RoPE (the value); image and
  // video tokens the 3-D encoding, given in a note.
  if (const auto ms = d.find("mrope_section"); ms != d.end() && !ms->is_null()) {
    if (!ms->is_array() || ms->empty()) r.bad("mrope_section", *ms, "a list of pair counts per axis");
    std::vector<double> sections;
    for (const auto& x : *ms) {
      if (!x.is_number_integer() || x.get<std::int64_t>() < 1) r.bad("mrope_section", *ms, "positive integers");
      sections.push_back(x.get<double>());
    }
    const bool interleaved = r.boolean(d, "mrope_interleaved").value_or(false);
    notes.push_back(fmt::format("mrope: text tokens (t = h = w) see this 1-D RoPE; image and video tokens see "
                                "nd:family=mrope,dim={},base={},sections={}{} (lag (Dt, Dh, Dw))",
                                dims, format_number(theta), format_numbers(sections), interleaved ? ",interleaved=true" : ""));
  }
  // factor and the original length are checked (> 0) under every rope type, as transformers' validation reads them.
  (void)r.positive(d, "factor"), (void)r.positive(d, "original_max_position_embeddings");
  enc::Rope rope{FrequencySchedule{g}};
  Scaling& scaling = rope.freqs.scaling;
  if (type == "default" || type == "mrope" || type == "default_mrope") return rope;
  if (type == "linear") {
    scaling = scheme_from_dict<scaling::Linear>(r, d, type);
  } else if (type == "dynamic") {
    if (!max_pos) r.missing("max_position_embeddings", "dynamic NTK scales past it");
    auto dyn = scheme_from_dict<scaling::Dynamic>(r, d, type);
    dyn.orig = static_cast<double>(*max_pos);  // its key table's config.max_position_embeddings
    scaling = dyn;
  } else if (type == "llama3") {
    scaling = scheme_from_dict<scaling::Llama3>(r, d, type, {"factor", "low_freq_factor", "high_freq_factor"});
  } else if (type == "yarn") {
    // Without factor, transformers takes max_position_embeddings / original (the scheme's max key).
    if (!r.positive(d, "factor") && !max_pos)
      r.missing("rope_parameters.factor", "and max_position_embeddings is absent: yarn needs one");
    // Zero-valued keys go through: the scheme reads them as transformers does (beta_fast 0 -> 32, mscale 0 ignored).
    auto y = scheme_from_dict<scaling::Yarn>(r, d, type);
    if (!y.factor) y.max = static_cast<double>(*max_pos);
    if (const auto af = r.number(d, "attn_factor"))
      notes.push_back(fmt::format("attn_factor = {}: transformers 5.17 ignores it; vLLM multiplies it into the "
                                  "attention factor (logits differ by its inverse square, {})",
                                  format_number(*af), format_significant(1 / (*af * *af), 8)));
    scaling = y;
  } else if (type == "longrope") {
    if (!max_pos) r.missing("max_position_embeddings", "LongRoPE switches factors past the original length");
    // An explicit factor sets the attention factor (transformers uses it over max / orig).
    auto lr = scheme_from_dict<scaling::LongRope>(r, d, type);
    lr.max = static_cast<double>(*max_pos);
    scaling = lr;
  } else if (type == "proportional") {
    // Gemma 4: the partial fraction here is p-RoPE's (pairs over the whole head), read by the scheme itself.
    auto pr = scheme_from_dict<scaling::Proportional>(r, d, type);
    scaling = pr;
  } else {
    r.bad("rope_type", json(type), "one of default, linear, dynamic, yarn, longrope, llama3, proportional, mrope");
  }
  return rope;
}

// Model classes whose attention scales the logits by query_pre_attn_scalar^-0.5 (modeling_gemma2.py, modeling_gemma3.py).
const std::set<std::string> kQueryPreAttnScalar = {"gemma2", "gemma3", "gemma3_text"};

// Model classes that fill no_rope_layers themselves when it is absent or empty: a NoPE layer every
// no_rope_layer_interval layers (transformers' Llama4TextConfig, SmolLM3Config).
const std::set<std::string> kDefaultNoRope = {"llama4", "llama4_text", "smollm3"};
// Model classes whose rotation pairs dims (2i, 2i + 1) of the projections (transformers 5: rotate_every_two of
// modeling_gptj.py and modeling_codegen.py; the interleaved rotate_half of modeling_cohere.py, modeling_glm.py and
// modeling_glm4.py; view_as_complex of modeling_llama4.py and modeling_deepseek_v2.py). DeepSeek-V3 pairs so when
// rope_interleave is true (its default: apply_rotary_pos_emb_interleave). Every other class: rotate_half.
const std::set<std::string> kAdjacentPairs = {"gptj",   "codegen",     "cohere",      "cohere2",    "glm",
                                              "glm4",   "llama4",      "llama4_text", "deepseek_v2"};
// Model classes whose attention applies sliding_window in every layer (transformers' Mistral, Phi-3).
const std::set<std::string> kSlidesEveryLayer = {"mistral", "phi3"};

struct LayerStructure {
  std::vector<std::string> types;
  std::vector<bool> rope_on;
};

// Each layer's type and whether it rotates: layer_types, else the model class's own rule (Gemma's
// sliding_window_pattern, Llama 4's chunked rope layers, Mistral's sliding layers, Qwen2's max_window_layers),
// else full attention; no_rope_layers[i] = 0 (Llama 4, SmolLM3) means no positional encoding in layer i.
LayerStructure layer_structure(const Reader& r, const json& cfg, const Text& t, Model& m) {
  LayerStructure out;
  const bool given = cfg.contains("layer_types") && !cfg["layer_types"].is_null();
  std::size_t n = static_cast<std::size_t>(t.layers.value_or(1));
  if (given) {
    const auto& lt = cfg["layer_types"];
    if (!lt.is_array() || lt.empty()) r.bad("layer_types", lt, "a non-empty list of layer type names");
    for (const auto& x : lt) {
      if (!x.is_string()) r.bad("layer_types", lt, "a list of strings");
      out.types.push_back(x.get<std::string>());
    }
    if (t.layers && static_cast<std::int64_t>(out.types.size()) != *t.layers)
      r.bad("layer_types", json(fmt::format("{} entries", out.types.size())),
            fmt::format("one entry per layer (num_hidden_layers = {})", *t.layers));
    n = out.types.size();
  }
  out.rope_on.assign(n, true);
  const auto nr = cfg.find("no_rope_layers");
  const bool nr_given = nr != cfg.end() && !nr->is_null() && !(nr->is_array() && nr->empty() && kDefaultNoRope.count(m.model_type));
  if (nr_given) {
    if (!nr->is_array() || nr->size() != n)
      r.bad("no_rope_layers", *nr, fmt::format("a list of {} entries 0 or 1, one per layer", n));
    for (std::size_t i = 0; i < n; ++i) {
      if (!(*nr)[i].is_number_integer() || ((*nr)[i] != 0 && (*nr)[i] != 1)) r.bad("no_rope_layers", *nr, "entries 0 or 1");
      out.rope_on[i] = (*nr)[i] == 1;
    }
  } else if (kDefaultNoRope.count(m.model_type) && t.layers) {
    const auto every = r.integer(cfg, "no_rope_layer_interval", 1, kMaxLayers).value_or(4);
    for (std::size_t i = 0; i < n; ++i) out.rope_on[i] = (i + 1) % static_cast<std::size_t>(every) != 0;
    m.notes.push_back(fmt::format("NoPE every {} layers (transformers' {} default for an absent no_rope_layers)", every,
                                  m.model_type));
  }
  if (given) return out;
  const auto pattern = r.integer(cfg, "sliding_window_pattern", 1, kMaxLayers);
  const auto use_sliding = r.boolean(cfg, "use_sliding_window");
  for (std::size_t i = 0; i < n; ++i) {
    std::string type = "full_attention";
    if (pattern && cfg.contains("rope_local_base_freq") && t.layers) {
      if ((i + 1) % static_cast<std::size_t>(*pattern)) type = "sliding_attention";
    } else if (m.model_type.rfind("llama4", 0) == 0 && t.chunk) {
      if (out.rope_on[i]) type = "chunked_attention";  // Llama4TextConfig: rope layers chunked, NoPE layers full
    } else if (t.sliding_window && kSlidesEveryLayer.count(m.model_type)) {
      type = "sliding_attention";
    } else if (t.sliding_window && use_sliding.value_or(false)) {
      const auto first = r.integer(cfg, "max_window_layers", 0, kMaxLayers).value_or(0);  // Qwen2: layers >= it slide
      if (static_cast<std::int64_t>(i) >= first) type = "sliding_attention";
    }
    out.types.push_back(type);
  }
  if (pattern && cfg.contains("rope_local_base_freq") && t.layers)
    m.notes.push_back(fmt::format("layer types from sliding_window_pattern = {}", *pattern));
  if (t.sliding_window && use_sliding && !*use_sliding)
    m.notes.push_back(fmt::format("sliding_window = {} unused (use_sliding_window is false)", *t.sliding_window));
  return out;
}

Window layer_window(const std::string& type, const Text& t) {
  if (type == "sliding_attention" && t.sliding_window) return {Window::Kind::sliding, *t.sliding_window};
  if (type == "chunked_attention" && t.chunk) return {Window::Kind::chunked, *t.chunk};
  return {};
}

// The value's frequencies at seq_len (checked as the spelling's parser checks a schedule: the scheme's key rules,
// dim and partial, list lengths), a refusal naming the layer type.
FrequencyTable checked_frequencies(const Encoding& e, std::optional<double> seq_len, const std::string& where) {
  try {
    return frequencies(*rotary_leaves(e).front(), seq_len);
  } catch (const InputError& err) {
    std::string what = err.what();
    if (what.starts_with("ropekit::frequencies: ")) what.erase(0, std::string_view("ropekit::frequencies: ").size());
    throw InputError(fmt::format("{}: {}", where, what));
  }
}

}  // namespace

std::string python_json_to_strict(std::string_view text, const std::string& source) {
  std::string out;
  out.reserve(text.size());
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      out += c;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') {
      if (++depth > kMaxNesting)
        throw InputError(fmt::format("{}: JSON nests more than {} levels deep (a config.json nests 3 or 4)", source,
                                     kMaxNesting));
    }
    if (c == '}' || c == ']') --depth;
    bool replaced = false;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, token.size()) == token) {
        out += fmt::format("\"{}\"", token);
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

namespace {

Model read_checked(std::string_view text, const std::string& source);

// JSON with every object's keys distinct: nlohmann, like Python's json (and so transformers), keeps the last of a
// repeated key silently, so a config that repeats one says two things; it is refused naming the key.
json parse_unique_keys(const std::string& text, const std::string& source) {
  struct Object {
    std::set<std::string> keys;
    std::string prefix, last;  // the dotted path of this object's keys; the key read last
  };
  std::vector<Object> open;
  return json::parse(text, [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open.push_back({{}, open.empty() ? "" : open.back().prefix + open.back().last + ".", ""});
    } else if (event == json::parse_event_t::object_end) {
      open.pop_back();
    } else if (event == json::parse_event_t::key && !open.empty()) {
      open.back().last = parsed.get<std::string>();
      if (!open.back().keys.insert(open.back().last).second)
        throw_bad_value(source, open.back().prefix + open.back().last, "given twice",
                        "each key once in an object (JSON readers keep the last silently)");
    }
    return true;
  });
}

}  // namespace

Model read_hf_config(std::string_view text, const std::string& source) {
  // Every access is checked above; a JSON type error that slips past them is still the file's, never an internal one.
  try {
    return read_checked(text, source);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: a value of an unexpected type ({})", source, bounded(e.what())));
  }
}

namespace {

Model read_checked(std::string_view text, const std::string& source) {
  const Reader r(source);
  json root;
  try {
    root = parse_unique_keys(python_json_to_strict(text, source), source);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past double (2e4576)
    throw InputError(fmt::format("{}: not JSON ({})", source, bounded(e.what())));
  }
  if (!root.is_object()) r.bad("the file", root, "a JSON object (a config.json)");

  Model m;
  m.source = source;
  // Composite models (Gemma 3, Llama 4, Qwen2-VL, ...) keep the language model's keys under text_config.
  json cfg = root;
  for (int depth = 0; cfg.contains("text_config") && !cfg["text_config"].is_null(); ++depth) {
    if (!cfg["text_config"].is_object()) r.bad("text_config", cfg["text_config"], "an object");
    if (depth == kMaxTextConfigDepth)
      r.bad("text_config", json("nested"), fmt::format("nested at most {} deep", kMaxTextConfigDepth));
    json inner = cfg["text_config"];
    cfg = std::move(inner);
    m.notes.push_back("read from text_config");
  }
  Text t;
  m.model_type = r.string(cfg, "model_type").value_or(r.string(root, "model_type").value_or(""));
  t.model_type = m.model_type;
  const bool t5 = cfg.contains("rope_parameters") && !cfg["rope_parameters"].is_null();
  m.format = t5 ? "config.json (transformers 5 keys)" : "config.json (transformers 4 keys)";
  // ALiBi and learned-position models, by their model class (non_rope.hpp).
  if (auto other = hf::read_non_rope(r, cfg, m)) return std::move(*other);
  t.layers = r.integer(cfg, "num_hidden_layers", 1, kMaxLayers);
  t.max_pos = r.integer(cfg, "max_position_embeddings", 1, std::int64_t{1} << 53);
  m.context_length = t.max_pos;
  t.sliding_window = r.integer(cfg, "sliding_window", 1, std::int64_t{1} << 53);
  t.chunk = r.integer(cfg, "attention_chunk_size", 1, std::int64_t{1} << 53);
  t.rope_theta = r.positive(cfg, "rope_theta");
  if (!t.rope_theta) t.rope_theta = r.positive(cfg, "rotary_emb_base");  // GPT-NeoX legacy
  t.orig_top = r.positive(cfg, "original_max_position_embeddings");

  // Head size: DeepSeek MLA's qk_rope_head_dim rotated + qk_nope_head_dim unrotated dims (its rotary module
  // sees qk_rope_head_dim); else head_dim; else hidden_size / num_attention_heads.
  if (const auto rope_dims = r.integer(cfg, "qk_rope_head_dim", 2, kMaxHeadDim)) {
    t.deepseek = true;
    t.head_dim = static_cast<int>(*rope_dims);
    t.qk_dims = t.head_dim + static_cast<int>(r.integer(cfg, "qk_nope_head_dim", 0, kMaxHeadDim).value_or(0));
  } else if (const auto hd = r.integer(cfg, "head_dim", 2, kMaxHeadDim)) {
    t.head_dim = t.qk_dims = static_cast<int>(*hd);
  } else {
    const auto hidden = r.integer(cfg, "hidden_size", 1, std::int64_t{1} << 30);
    const auto heads = r.integer(cfg, "num_attention_heads", 1, std::int64_t{1} << 20);
    if (!hidden || !heads) r.missing("head_dim", "and hidden_size / num_attention_heads are not both given");
    if (*hidden % *heads != 0)
      r.bad("hidden_size", json(*hidden), fmt::format("divisible by num_attention_heads = {}", *heads));
    t.head_dim = t.qk_dims = static_cast<int>(*hidden / *heads);
  }
  read_layer_head_dims(r, cfg, m.model_type, t);
  // Partial rotation: partial_rotary_factor, GPT-NeoX rotary_pct, GPT-J rotary_dim (a count of dims).
  t.partial = r.number(cfg, "partial_rotary_factor");
  if (!t.partial) t.partial = r.number(cfg, "rotary_pct");
  if (!t.partial)
    if (const auto rd = r.integer(cfg, "rotary_dim", 2, kMaxHeadDim)) t.partial = static_cast<double>(*rd) / t.head_dim;

  const auto [types, rope_on] = layer_structure(r, cfg, t, m);
  hf::check_rope_stated(r, cfg, m.model_type);
  // The config's layer type names; a type with rotary and NoPE layers both (SmolLM3's full_attention) names its
  // NoPE layers "<type>/nope".
  std::set<std::string> rotary_types, nope_types;
  for (std::size_t i = 0; i < types.size(); ++i) (rope_on[i] ? rotary_types : nope_types).insert(types[i]);

  // Rope dicts per layer type: rope_parameters (flat or per type), else rope_scaling + rope_theta.
  std::map<std::string, json> dicts;
  std::vector<std::string> notes;
  const std::set<std::string> type_set(types.begin(), types.end());
  if (t5) {
    const auto& rp = cfg["rope_parameters"];
    if (!rp.is_object()) r.bad("rope_parameters", rp, "an object (or an object per layer type)");
    const bool per_type =
        std::any_of(rp.items().begin(), rp.items().end(), [&](const auto& kv) { return type_set.count(kv.key()); });
    for (const auto& type : type_set) {
      // transformers indexes rope_parameters[layer_type]: a rotary type without its entry raises KeyError there.
      if (per_type && !rp.contains(type) && rotary_types.count(type))
        r.missing(fmt::format("rope_parameters.{}", type),
                  fmt::format("layer_types has {} layers with RoPE; transformers raises KeyError: '{}'", type, type));
      json d = per_type ? (rp.contains(type) ? rp.at(type) : json(nullptr)) : rp;
      if (per_type && d.is_null()) continue;  // saved as null: that type has no rotary module
      dicts[type] = standardized(r, d, t, notes);
    }
  } else {
    json d = json::object();
    if (cfg.contains("rope_scaling") && !cfg["rope_scaling"].is_null()) {
      if (!cfg["rope_scaling"].is_object()) r.bad("rope_scaling", cfg["rope_scaling"], "an object or null");
      d = cfg["rope_scaling"];
    }
    for (const auto& type : type_set) dicts[type] = standardized(r, d, t, notes);
    // Gemma 3's sliding layers: default RoPE at rope_local_base_freq.
    if (const auto local = r.positive(cfg, "rope_local_base_freq"); local && type_set.count("sliding_attention")) {
      json s = {{"rope_type", "default"}, {"rope_theta", *local}};
      dicts["sliding_attention"] = standardized(r, s, t, notes);
    }
  }

  // One LayerType per (type, rope on/off), in order of first appearance.
  // attn_temperature_tuning: transformers tests it for truth (Python), so an integer such as 4 counts as true.
  bool temperature = false;
  if (const auto it = cfg.find("attn_temperature_tuning"); it != cfg.end() && !it->is_null()) {
    if (it->is_boolean()) temperature = it->get<bool>();
    else if (it->is_number()) temperature = it->get<double>() != 0;
    else r.bad("attn_temperature_tuning", *it, "true, false or a number");
  }
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string name = rope_on[i] || !rotary_types.count(types[i]) ? types[i] : types[i] + "/nope";
    auto it = std::find_if(m.layer_types.begin(), m.layer_types.end(), [&](const auto& l) { return l.name == name; });
    // This layer's head size: its per_layer_config entry, else global_head_dim for full attention, else the model's.
    int dims = t.head_dim, qk_dims = t.qk_dims;
    if (const auto hd = t.layer_head_dim.find(static_cast<std::int64_t>(i)); hd != t.layer_head_dim.end())
      dims = qk_dims = hd->second;
    else if (t.global_head_dim && types[i] == "full_attention")
      dims = qk_dims = *t.global_head_dim;
    if (it != m.layer_types.end()) {
      if (it->head_dim != qk_dims)
        r.bad("per_layer_config", json(fmt::format("layer {}: head_dim {}", i, qk_dims)),
              fmt::format("one head size per layer type ({} layers have {})", name, it->head_dim));
      ++it->layers;
      continue;
    }
    LayerType l;
    l.name = name;
    l.layers = t.layers ? 1 : 0;
    l.head_dim = qk_dims;
    l.window = layer_window(types[i], t);
    if (kAdjacentPairs.count(m.model_type) || (m.model_type == "deepseek_v3" && r.boolean(cfg, "rope_interleave").value_or(true)))
      l.pairing = Pairing::adjacent;
    const auto d = dicts.find(types[i]);
    if (!rope_on[i] || d == dicts.end()) {
      // No position encoding: G = I over the whole q.k head (its content variance is the head's, as a rope layer's).
      l.encoding = {enc::Nope{qk_dims}};
      if (temperature && !rope_on[i]) {
        const double floor = r.positive(cfg, "floor_scale").value_or(8192), scale = r.number(cfg, "attn_scale").value_or(0.1);
        l.temperature = QueryTemperature{floor, scale};
        l.notes.push_back(fmt::format("query scaled by s(p) = {} ln(1 + floor((p + 1)/{})) + 1 "
                                      "(attn_temperature_tuning): the score depends on the query position",
                                      format_number(scale), format_number(floor)));
      }
    } else {
      l.notes = notes;
      l.rope_type = d->second.value("rope_type", "default");
      for (const auto& [k, v] : d->second.items())
        if (v.is_number() || v.is_boolean()) l.rope_keys[k] = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
      const Encoding rope{rope_of(r, d->second, dims, t.max_pos, m.model_type, l.notes)};
      // DeepSeek MLA: G = R_rope (+) I_nope over the whole q.k head (models.md section 2, "decoupled").
      l.encoding = qk_dims > dims ? Encoding{enc::DirectSum{{rope, Encoding{enc::Nope{qk_dims - dims}}}}} : rope;
      // Dynamic NTK at its original length (no rescaling yet); LongRoPE before any length (its short factors).
      const bool dynamic = d->second.value("rope_type", "") == "dynamic";
      const auto f = checked_frequencies(l.encoding, dynamic ? std::optional<double>(static_cast<double>(*t.max_pos))
                                                             : std::nullopt,
                                         fmt::format("{}: layer type {}", source, name));
      for (auto& n : encoding_notes(l.encoding)) l.notes.push_back(std::move(n));
      l.attention_factor = f.attention_factor;
      l.rotary_dims = 2 * static_cast<int>(std::count_if(f.theta.data(), f.theta.data() + f.theta.size(),
                                                         [](double x) { return x != 0; }));
      // DeepSeek: the softmax is scaled by mscale(s, mscale_all_dim)^2 besides the rotary attention factor.
      if (t.deepseek && d->second.value("rope_type", "") != "default") {
        const double s = r.number(d->second, "factor").value_or(1), all = r.number(d->second, "mscale_all_dim").value_or(0);
        if (all != 0) l.softmax_scale = std::pow(yarn_mscale(s, all), 2);  // 1 for s <= 1
      }
      if (qk_dims > dims)
        l.notes.push_back(fmt::format("qk_rope_head_dim = {} rotated, qk_nope_head_dim = {} not: the encoding is their "
                                      "direct sum over the {}-dim head",
                                      dims, qk_dims - dims, qk_dims));
    }
    // Gemma 2 and 3 scale the logits by query_pre_attn_scalar^-0.5 instead of head_dim^-0.5 (their attention's
    // self.scaling; Gemma2Config and Gemma3TextConfig default the key to 256).
    if (kQueryPreAttnScalar.count(m.model_type)) {
      const auto given = r.positive(cfg, "query_pre_attn_scalar");
      const double q = given.value_or(256);
      l.softmax_scale *= std::sqrt(qk_dims / q);
      if (std::sqrt(qk_dims / q) != 1)
        l.notes.push_back(fmt::format("query_pre_attn_scalar = {}{}: logits scaled by {}^-0.5, not head_dim {}^-0.5",
                                      format_number(q), given ? "" : " (absent: transformers' default)",
                                      format_number(q), qk_dims));
    }
    m.layer_types.push_back(std::move(l));
  }
  return m;
}

}  // namespace

}  // namespace ropekit
