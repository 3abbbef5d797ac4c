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

namespace ropekit {

enum class PipelineKind { huggingface, ggml, vllm, flash, llama4 };

/// How stage 2 forms the angle: fl32(fl32(p) theta_i) (one rounded product; the inv_freq and angle dtypes and tf32
/// apply), or ggml_rope_cache_init's running product over the pairs with rope_yarn's interpolation, in fp32.
enum class AngleRule { product, ggml_running };
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
  std::string_view source;    ///< the code followed (file and function, with the version read)
};

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
