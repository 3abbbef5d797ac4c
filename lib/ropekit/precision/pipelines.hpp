#pragma once
// The frameworks' RoPE pipelines as one table (spec precision.md section 1): a row per pipeline with its names, the
// dtype of each stage, the frequency convention and the source it follows. Every decision the precision code takes
// on a pipeline reads this row; pipeline.cpp and score.cpp implement the stages' arithmetic (the angle rule: a
// product, or ggml's running product). Adding a pipeline: docs/dev/architecture.md, "Adding a precision pipeline".

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/encodings/scaling/scheme.hpp"
#include "ropekit/precision/dtype.hpp"

namespace ropekit {

enum class PipelineKind { huggingface, ggml, vllm, flash, llama4, ggml_fma };

/// How stage 2 forms the angle: fl32(fl32(p) theta_i) (one rounded product; the inv_freq and angle dtypes and tf32
/// apply), or ggml_rope_cache_init's running product over the pairs with rope_yarn's interpolation, in fp32: each
/// product and the sum rounded (ggml_running), or as GCC contracts rope_yarn at -march=native (ggml_running_fma:
/// theta = fmaf(theta_interp, 1 - ramp, theta_extrap ramp), mscale = attn_factor fmaf(0.1, logf(1/freq_scale), 1)).
enum class AngleRule { product, ggml_running, ggml_running_fma };
/// True for ggml's running product (either contraction).
constexpr bool ggml_angle(AngleRule a) { return a != AngleRule::product; }
/// How stage 3 takes cos and sin of the held fp32 angle: correctly rounded to fp32 (a double cos rounded once, as
/// PyTorch's CPU kernels give), or the C library's float cosf / sinf (ggml's rope_yarn calls them).
enum class SinCos { rounded, libm_float };
/// A stage's dtype: fp32 whatever the model's, or the model dtype (tf32 standing for fp32 tensors).
enum class StageDtype { fp32, model };

struct PipelineInfo {
  PipelineKind kind;
  std::string_view name;                    ///< as --pipeline takes it and reports print it
  std::array<std::string_view, 2> aliases;  ///< other names --pipeline accepts ("" for none)
  Convention convention;                    ///< whose frequencies (ggml's YaRN is not transformers')
  AngleRule angle;
  bool held_dtypes_settable;  ///< inv_freq_dtype / angle_dtype other than fp32 (a buffer cast with the model)
  StageDtype tables;          ///< the cos / sin tables
  StageDtype rotation;        ///< the products and sums of the rotation
  StageDtype stored;          ///< the rotated q, k as stored
  SinCos sincos;              ///< stage 3's cos and sin
  unsigned dtypes;            ///< the model dtypes it takes, dtype_bit(...) | ...
  std::string_view dtypes_reason;  ///< why the others are refused ("" when it takes all)
  std::string_view source;    ///< the code followed (file and function, with the version read)
};

constexpr unsigned dtype_bit(Dtype d) { return 1u << static_cast<unsigned>(d); }
constexpr unsigned kEveryDtype = dtype_bit(Dtype::fp32) | dtype_bit(Dtype::tf32) | dtype_bit(Dtype::bf16) |
                                 dtype_bit(Dtype::fp16);

/// Every pipeline, in the order of PipelineKind (`ropekit list pipelines`).
std::span<const PipelineInfo> pipelines();
const PipelineInfo& pipeline_info(PipelineKind kind);

/// A name or alias of a row of pipelines(). @throws InputError naming `--pipeline` and the names.
PipelineKind parse_pipeline(std::string_view text, const Where& where);
std::string_view pipeline_name(PipelineKind p);

/// The table as text, `ropekit list pipelines` and ropekit.list_pipelines(): these columns, a row per pipeline.
const std::vector<std::string>& pipeline_list_columns();
std::vector<std::vector<std::string>> pipeline_list_rows();

}  // namespace ropekit
