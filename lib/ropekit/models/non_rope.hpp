#pragma once
// config.json of models whose position encoding is not RoPE, recognised as transformers' modeling code decides it:
// by model_type and the model's own keys (modeling_bloom.py, modeling_mpt.py, modeling_falcon.py, modeling_opt.py).
//   ALiBi: BLOOM and MPT always, Falcon where `alibi` is true. Each head adds -m_h x lag to its logits with its
//          own slope m_h, so each head is a layer type of its own, "full_attention/head_<h>", spelled
//          alibi:slope=m_h with the slope as the model's code computes it (float32; Falcon's bfloat16 and divided
//          by sqrt(head_dim), since it scales the bias with the logits).
//   learned absolute positions (OPT, GPT-2, GPT-Neo, GPTBigCode, BioGPT): refused, naming what the model does.
// A config whose model_type is not a RoPE class ropekit knows and which states no rotary key is refused, never
// read as RoPE at an assumed base.

#include <optional>
#include <string>
#include <vector>

#include "ropekit/models/hf_reader.hpp"
#include "ropekit/models/model.hpp"

namespace ropekit::hf {

/// BLOOM's ALiBi slopes for `heads` heads (transformers' build_alibi_tensor in modeling_bloom.py, copied by Falcon):
/// with c the largest power of 2 <= heads, 2^(-8k/c) for k = 1..c, then 2^(-4(2j+1)/c) for the remaining heads,
/// each as float32 powers of the float32 base.
std::vector<float> bloom_alibi_slopes(int heads);

/// MPT's (build_mpt_alibi_tensor in modeling_mpt.py): with c the smallest power of 2 >= heads, 1 / 2^(k b / c) for
/// k = 1..c (b = alibi_bias_max), reordered odd-indexed first when heads < c, in float32.
std::vector<float> mpt_alibi_slopes(int heads, double alibi_bias_max);

/// The model when `cfg` (the text config) belongs to a model class without RoPE: ALiBi models are read (one layer
/// type per head), learned-position models refused; nullopt for every other class.
/// @throws InputError naming model_type for a model without a relative encoding, or a malformed key.
std::optional<Model> read_non_rope(const Reader& r, const json& cfg, Model m);

/// Refuses a config that names no rotary key (rope_theta, rope_scaling, rope_parameters, ...) unless its model_type
/// is a transformers class known to rotate by default (base 10000 when rope_theta is absent).
void check_rope_stated(const Reader& r, const json& cfg, const std::string& model_type);

}  // namespace ropekit::hf
