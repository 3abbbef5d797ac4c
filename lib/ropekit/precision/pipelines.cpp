#include "ropekit/precision/pipelines.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/echo.hpp"

namespace ropekit {

namespace {

using enum StageDtype;
using enum SinCos;

constexpr unsigned kGgmlDtypes = dtype_bit(Dtype::fp32) | dtype_bit(Dtype::fp16);
constexpr std::string_view kGgmlDtypesReason = "ggml's CPU rope takes f32 and f16 tensors, no bf16 (and no tf32 matmul)";

// One row per pipeline; the arithmetic of each stage is in pipeline.cpp (angle, tables) and score.cpp (rotation).
constexpr auto kPipelines = std::to_array<PipelineInfo>({
    {PipelineKind::huggingface, "huggingface", {"hf", "transformers"}, Convention::huggingface, AngleRule::product, true,
     model, model, model, rounded, kEveryDtype, "",
     "transformers 5.17 models/llama/modeling_llama.py: LlamaRotaryEmbedding.forward (inv_freq @ position_ids in fp32, "
     "cos/sin times attention_scaling cast to the model dtype) and apply_rotary_pos_emb (q * cos + rotate_half(q) * sin "
     "in the model dtype)"},
    {PipelineKind::ggml, "ggml", {"llama.cpp", ""}, Convention::ggml, AngleRule::ggml_running, false, fp32, fp32, model,
     libm_float, kGgmlDtypes, kGgmlDtypesReason,
     "llama.cpp ggml/src/ggml-cpu/ops.cpp: ggml_rope_cache_init (theta *= powf(base, -2/n_dims) per pair) and rope_yarn "
     "(cosf/sinf times mscale) into an f32 cache, each product and sum rounded; rope_f32 / rope_f16 rotate in fp32 and "
     "store in the tensor's type"},
    {PipelineKind::vllm, "vllm", {"", ""}, Convention::huggingface, AngleRule::product, false, model, fp32, model,
     rounded, kEveryDtype, "",
     "vLLM model_executor/layers/rotary_embedding: _compute_cos_sin_cache (fp32 einsum, cast to the model dtype) and the "
     "rotary kernel (fp32 registers, stored in the model dtype)"},
    {PipelineKind::flash, "flash", {"flash-attention", ""}, Convention::huggingface, AngleRule::product, false, model,
     fp32, model, rounded, kEveryDtype, "",
     "flash-attention flash_attn/layers/rotary.py: apply_rotary_emb (cos/sin in the input dtype, the rotation in fp32, "
     "stored in the input dtype)"},
    {PipelineKind::llama4, "llama4", {"", ""}, Convention::huggingface, AngleRule::product, false, fp32, fp32, model,
     rounded, kEveryDtype, "",
     "transformers 5.17 models/llama4/modeling_llama4.py: Llama4TextRotaryEmbedding (freqs_cis = torch.polar in "
     "complex64) and apply_rotary_emb (complex64 products on interleaved pairs, cast back to the model dtype)"},
    {PipelineKind::ggml_fma, "ggml-fma", {"", ""}, Convention::ggml, AngleRule::ggml_running_fma, false, fp32, fp32, model,
     libm_float, kGgmlDtypes, kGgmlDtypesReason,
     "llama.cpp ggml/src/ggml-cpu/ops.cpp as GCC compiles it at -march=native (FMA): rope_yarn's theta_interp "
     "(1 - ramp_mix) + theta_extrap ramp_mix contracted to fmaf(theta_interp, 1 - ramp_mix, theta_extrap ramp_mix), its "
     "mscale to attn_factor fmaf(0.1f, logf(1/freq_scale), 1); otherwise as ggml"},
});

// The row of each kind sits at the kind's index, and every kind up to the last enumerator has one.
constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kPipelines.size(); ++i)
    if (static_cast<std::size_t>(kPipelines[i].kind) != i) return false;
  return kPipelines.size() == static_cast<std::size_t>(PipelineKind::ggml_fma) + 1;
}
static_assert(rows_in_order(), "kPipelines: one row per PipelineKind, in the enum's order");

}  // namespace

std::span<const PipelineInfo> pipelines() { return kPipelines; }

const PipelineInfo& pipeline_info(PipelineKind kind) { return kPipelines[static_cast<std::size_t>(kind)]; }

PipelineKind parse_pipeline(std::string_view text, const Where& where) {
  std::vector<std::string_view> names;
  for (const PipelineInfo& p : kPipelines) {
    if (text == p.name || (!text.empty() && (text == p.aliases[0] || text == p.aliases[1]))) return p.kind;
    names.push_back(p.name);
  }
  const std::string last(names.back());
  names.pop_back();
  throw_bad_value(where, "pipeline", quote(std::string(text)), fmt::format("{} or {}", fmt::join(names, ", "), last));
}

std::string_view pipeline_name(PipelineKind p) { return pipeline_info(p).name; }

const std::vector<std::string>& pipeline_list_columns() {
  static const std::vector<std::string> columns = {
      "pipeline", "aliases", "convention", "angle", "inv_freq and angle dtypes", "tables", "cos and sin", "rotation",
      "stored", "model dtypes", "source"};
  return columns;
}

std::vector<std::vector<std::string>> pipeline_list_rows() {
  const auto dtype = [](StageDtype d) { return std::string(d == StageDtype::fp32 ? "fp32" : "model dtype"); };
  std::vector<std::vector<std::string>> rows;
  for (const PipelineInfo& p : kPipelines) {
    std::string aliases;
    for (const std::string_view a : p.aliases)
      if (!a.empty()) aliases += (aliases.empty() ? "" : ", ") + std::string(a);
    std::string dtypes;
    for (const Dtype d : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16})
      if (p.dtypes & dtype_bit(d)) dtypes += (dtypes.empty() ? "" : ", ") + std::string(dtype_name(d));
    const std::string_view angle = p.angle == AngleRule::product        ? "fl32(fl32(p) theta_i)"
                                   : p.angle == AngleRule::ggml_running ? "fp32 running product over the pairs"
                                                                        : "fp32 running product over the pairs, "
                                                                          "rope_yarn's sum as an FMA";
    rows.push_back({std::string(p.name), aliases, p.convention == Convention::ggml ? "ggml" : "huggingface",
                    std::string(angle), p.held_dtypes_settable ? "fp32, or --inv-freq-dtype / --angle-dtype" : "fp32",
                    dtype(p.tables), p.sincos == SinCos::rounded ? "correctly rounded to fp32" : "C library cosf, sinf",
                    dtype(p.rotation), dtype(p.stored), dtypes, std::string(p.source)});
  }
  return rows;
}

}  // namespace ropekit
