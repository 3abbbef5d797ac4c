// config.json of models without RoPE, read as their transformers modeling code decides (non_rope.hpp): ALiBi slopes
// checked against the formulas of modeling_bloom.py, modeling_mpt.py and modeling_falcon.py worked by hand here;
// learned-position models and configs that state no rotary key refused; and the RoPE readings item 32 mended
// (NoPE layers as wide as the head, a missing rope_parameters entry, Gemma's query_pre_attn_scalar, Phi's partial
// rotation, repeated keys).

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ropekit/encoding.hpp"
#include "ropekit/models/hf_config.hpp"
#include "models/hf_refusal.hpp"
#include "ropekit/models/non_rope.hpp"

using namespace ropekit;

namespace {

double slope_of(const LayerType& l) { return std::get<enc::Alibi>(l.encoding.value).slope; }

// 12 heads in BLOOM's build_alibi_tensor, by hand: the largest power of 2 <= 12 is c = 8, base 2^(-8/8) = 1/2, so
// heads 0..7 have 2^-1 .. 2^-8; the 4 others take odd powers 1, 3, 5, 7 of 2^(-4/8): 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
const double kBloom12[] = {0.5,       0.25,        0.125,       0.0625,      0.03125,    0.015625,
                           0.0078125, 0.00390625,  0.70710678118654752, 0.35355339059327376,
                           0.17677669529663688, 0.088388347648318440};

}  // namespace

TEST_CASE("BLOOM: one ALiBi layer type per head, with the slopes of BLOOM's code") {
  const Model m = read_hf_config(R"({"model_type": "bloom", "n_head": 12, "hidden_size": 768, "n_layer": 24})", "b.json");
  REQUIRE(m.layer_types.size() == 12);
  for (int h = 0; h < 12; ++h) {
    const auto& l = m.layer_types[static_cast<std::size_t>(h)];
    CAPTURE(spelling(l.encoding));
    CHECK(l.name == "full_attention/head_" + std::to_string(h));
    CHECK(l.layers == 24);
    CHECK(l.head_dim == 64);
    CHECK(l.rotary_dims == 0);
    // float32 slopes: the base 2^-0.5 rounded to float32 (2^-24 relative), raised to at most the 7th power.
    CHECK(std::abs(slope_of(l) / kBloom12[h] - 1) <= 8 * 0x1p-24);
  }
  // 32 heads (BLOOM-560m's 16, BLOOM's 112 alike): the power of two c = heads gives 2^(-8k/c) exactly to float32.
  const auto s = hf::bloom_alibi_slopes(32);
  REQUIRE(s.size() == 32);
  for (int k = 1; k <= 32; ++k) CHECK(std::abs(s[k - 1] / std::exp2(-8.0 * k / 32) - 1) <= (k + 1) * 0x1p-24);
  // Without its head count, BLOOM is refused naming the key (it used to be "head_dim is missing").
  CHECK(refusal(R"({"model_type": "bloom", "hidden_size": 768})").find("n_head is missing") != std::string::npos);
}

TEST_CASE("MPT: the slopes of build_mpt_alibi_tensor, reordered for a head count that is not a power of 2") {
  // 12 heads, alibi_bias_max 8: c = 16, m_k = k/2, slopes 2^(-k/2) for k = 1..16, then the odd-indexed (k = 2, 4,
  // ..., 16: 2^-1 .. 2^-8) before the even-indexed (k = 1, 3, ...: 2^-0.5, 2^-1.5, ...), the first 12: BLOOM's 12.
  const Model m = read_hf_config(R"({"model_type": "mpt", "n_heads": 12, "d_model": 1536, "n_layers": 2,
      "max_seq_len": 2048, "attn_config": {"alibi": true, "alibi_bias_max": 8}})", "mpt.json");
  REQUIRE(m.layer_types.size() == 12);
  CHECK(m.context_length == 2048);
  for (int h = 0; h < 12; ++h) {
    CAPTURE(h);
    CHECK(m.layer_types[static_cast<std::size_t>(h)].head_dim == 128);
    // 2^(k/2) and its inverse each rounded to float32: 2 x 2^-24 relative.
    CHECK(std::abs(slope_of(m.layer_types[static_cast<std::size_t>(h)]) / kBloom12[h] - 1) <= 2 * 0x1p-24);
  }
  // alibi_bias_max 4 halves every exponent: 8 heads get 2^(-k/2), k = 1..8.
  const auto s = hf::mpt_alibi_slopes(8, 4);
  for (int k = 1; k <= 8; ++k) CHECK(std::abs(s[k - 1] / std::exp2(-k / 2.0) - 1) <= 2 * 0x1p-24);
}

TEST_CASE("Falcon: alibi = true gives bfloat16 slopes over sqrt(head_dim); alibi = false is RoPE") {
  // 12 heads of 64 dims: BLOOM's slopes in bfloat16 (2^-k exact; 2^-0.5 = 0.70710678 becomes 181/256 = 0.70703125,
  // 2^-1.5 = 0.35355339 becomes 181/512), divided by sqrt(64) = 8 because Falcon scales the bias with the logits.
  const Model m = read_hf_config(R"({"model_type": "falcon", "alibi": true, "hidden_size": 768,
      "num_attention_heads": 12, "num_hidden_layers": 2})", "falcon.json");
  REQUIRE(m.layer_types.size() == 12);
  CHECK(slope_of(m.layer_types[0]) == 0.5 / 8);
  CHECK(slope_of(m.layer_types[7]) == 0x1p-8 / 8);
  CHECK(slope_of(m.layer_types[8]) == 181.0 / 256 / 8);
  CHECK(slope_of(m.layer_types[9]) == 181.0 / 512 / 8);
  // FalconConfig's default is rotary: the file without alibi is RoPE at the class default base.
  const Model r = read_hf_config(R"({"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71})", "f7.json");
  REQUIRE(r.layer_types.size() == 1);
  CHECK(spelling(r.layer_types[0].encoding).rfind("rope:dim=64,base=10000", 0) == 0);
}

TEST_CASE("Models without a relative encoding are refused, never read as RoPE") {
  // OPT: learned absolute positions (OPTLearnedPositionalEmbedding); it used to read as rope:dim=64,base=10000.
  const auto opt = refusal(R"({"model_type": "opt", "hidden_size": 768, "num_attention_heads": 12})");
  CHECK(opt.find("c.json: model_type = \"opt\" (must be a model with a relative position encoding") == 0);
  CHECK(opt.find("learned absolute position embeddings") != std::string::npos);
  CHECK(refusal(R"({"model_type": "gpt2", "n_embd": 768, "n_head": 12})").find("GPT-2") != std::string::npos);
  // A class ropekit does not know, with no rotary key: refused rather than given an invented RoPE.
  const auto unknown = refusal(R"({"model_type": "mystery", "hidden_size": 768, "num_attention_heads": 12})");
  CHECK(unknown.find("c.json: model_type = \"mystery\" (must be a model class known to use RoPE") == 0);
  CHECK(unknown.find("RoPE at base 10000 would be a guess") != std::string::npos);
  CHECK(refusal(R"({"hidden_size": 768, "num_attention_heads": 12})").find("model_type = \"(absent)\"") != std::string::npos);
  // A rotary key states it: the same unknown class with rope_theta is read.
  CHECK(refusal(R"({"model_type": "mystery", "hidden_size": 768, "num_attention_heads": 12, "rope_theta": 1e4})").empty());
}

TEST_CASE("transformers 5 rope_parameters without an entry for a rotary layer type: refused naming the type") {
  // transformers indexes rope_parameters[layer_type] and raises KeyError; the type used to become nope of dim 2.
  const auto r = refusal(R"({"model_type": "gemma3_text", "head_dim": 8, "num_hidden_layers": 2,
      "layer_types": ["sliding_attention", "full_attention"],
      "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1000000}}})");
  CHECK(r == "c.json: rope_parameters.sliding_attention is missing (layer_types has sliding_attention layers with "
             "RoPE; transformers raises KeyError: 'sliding_attention')");
}

TEST_CASE("Gemma 2 and 3 scale the logits by query_pre_attn_scalar^-0.5") {
  // Gemma 2 27B: head_dim 128, query_pre_attn_scalar 144: the multiplier beyond 128^-0.5 is sqrt(128/144) = 2 sqrt 2 / 3.
  const Model g2 = read_hf_config(R"({"model_type": "gemma2", "head_dim": 128, "num_hidden_layers": 2,
      "query_pre_attn_scalar": 144, "rope_theta": 10000})", "g2.json");
  REQUIRE(g2.layer_types.size() == 1);
  CHECK(std::abs(g2.layer_types[0].softmax_scale - 2 * std::sqrt(2.0) / 3) < 1e-15);
  // Absent, Gemma3TextConfig's default 256: for head_dim 128, sqrt(128/256) = 2^-0.5, and a note says so.
  const Model g3 = read_hf_config(R"({"model_type": "gemma3_text", "head_dim": 128, "num_hidden_layers": 2,
      "rope_theta": 10000})", "g3.json");
  CHECK(std::abs(g3.layer_types[0].softmax_scale - std::sqrt(0.5)) < 1e-15);
  CHECK(layer_notes(g3, g3.layer_types[0]).find("query_pre_attn_scalar = 256 (absent: transformers' default)") !=
        std::string::npos);
  // Llama's attention is head_dim^-0.5 whatever the key says.
  const Model l = read_hf_config(R"({"model_type": "llama", "head_dim": 128, "query_pre_attn_scalar": 144,
      "rope_theta": 10000})", "l.json");
  CHECK(l.layer_types[0].softmax_scale == 1);
}

TEST_CASE("Phi-2's partial_rotary_factor: transformers' PhiAttention rotates the first 32 of 80 dims") {
  const Model m = read_hf_config(R"({"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32,
      "num_hidden_layers": 32, "partial_rotary_factor": 0.4, "rope_theta": 10000.0})", "phi2.json");
  REQUIRE(m.layer_types.size() == 1);
  const auto& l = m.layer_types[0];
  CHECK(l.head_dim == 80);
  CHECK(l.rotary_dims == 32);  // int(80 x 0.4)
  CHECK(layer_notes(m, l).find("not known") == std::string::npos);
  CHECK(layer_notes(m, l).find("transformers' phi default RoPE reads it: int(80 x 0.4) = 32 dims rotate") !=
        std::string::npos);
}

TEST_CASE("config.json: a key given twice is refused naming it, at any depth") {
  CHECK(refusal(R"({"head_dim": 64, "rope_theta": 10000, "rope_theta": 500000})") ==
        "c.json: rope_theta = given twice (must be each key once in an object (JSON readers keep the last silently))");
  CHECK(refusal(R"({"head_dim": 64, "rope_theta": 1e4, "rope_scaling": {"rope_type": "linear", "factor": 2,
      "factor": 4}})").find("rope_scaling.factor = given twice") != std::string::npos);
  // The same key in two objects is two keys.
  CHECK(refusal(R"({"head_dim": 64, "rope_theta": 1e4, "text_config": {"head_dim": 64, "rope_theta": 1e4}})").empty());
}

TEST_CASE("NoPE layers keep the config's type name unless the type has rotary layers too (SmolLM3)") {
  // SmolLM3: every layer full_attention, every 4th without RoPE: the config names both alike, so the NoPE ones are
  // "full_attention/nope"; they are as wide as the head, G = I_64.
  const Model m = read_hf_config(R"({"model_type": "smollm3", "head_dim": 64, "num_hidden_layers": 4,
      "no_rope_layers": [1, 1, 1, 0], "rope_theta": 5000000})", "smol.json");
  REQUIRE(m.layer_types.size() == 2);
  CHECK(m.layer_types[0].name == "full_attention");
  CHECK(m.layer_types[0].layers == 3);
  CHECK(m.layer_types[1].name == "full_attention/nope");
  CHECK(spelling(m.layer_types[1].encoding) == "nope:dim=64");
  CHECK(m.layer_types[1].layers == 1);
}
