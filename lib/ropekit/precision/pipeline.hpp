#pragma once
// A framework's RoPE pipeline as a value (spec precision.md section 1): how each stage is done and in which dtype,
// and what it holds at position p: inverse frequency, angle, cos and sin, with the errors against the exact
// (float64) encoding. Stages emulated by exact software rounding (dtype.hpp):
//   huggingface (transformers' Llama-family RotaryEmbedding.forward): theta_i in fp32 from the scheme's fp32 code
//     (frequencies(..., float32 = true)), or held in inv_freq_dtype; angle fl32(fl32(p) theta_i) (one rounded
//     product; tf32: both factors rounded to tf32 first; angle_dtype bf16/fp16: the product in that dtype, as a model
//     computing its angles in half precision); cos = fl_D(fl32(cos(angle)) fl32(a)), sin alike, D the model dtype.
//   ggml (llama.cpp's ggml_rope_cache_init + rope_yarn, CPU): theta_scale = powf(base, -2/r) over the r rotary
//     dims, running_0 = fl32(p), running_{i+1} = fl32(running_i theta_scale); then in fp32 theta_interp =
//     freq_scale running (linear and YaRN: freq_scale = 1/s), and for YaRN theta = theta_interp (1 - ramp_i) +
//     running ramp_i (ramp from ggml_rope_yarn_corr_dims, each product and the sum rounded); the C library's cosf /
//     sinf of that float times mscale (YaRN: attn_factor (1 + 0.1 ln s) in fp32) into an fp32 cache; the rotation
//     in fp32, stored in the tensor's type (f32 or f16; bf16 and tf32 are refused). Plain RoPE, partial, linear and
//     YaRN; llama3 and LongRoPE (GGUF rope_freqs factors) are not modelled.
//   ggml-fma: ggml as GCC compiles rope_yarn with FMA (-march=native): theta = fmaf(theta_interp, 1 - ramp_i,
//     running ramp_i) and mscale = attn_factor fmaf(0.1, logf(1/freq_scale), 1); the rotation's own contraction
//     (x0 cos - x1 sin) is not modelled.
//   vllm (vLLM's rotary embedding: an fp32 cos/sin cache from the einsum of positions and theta, cast to the model
//     dtype; its kernels rotate in fp32 registers) and flash (flash-attention's apply_rotary_emb: cos/sin in the
//     input dtype, rotation in fp32): stages 1-3 as huggingface, the rotation in fp32 (each product and the sum
//     rounded to fp32, no FMA contraction modelled), rounded once to the model dtype.
//   llama4 (transformers' Llama 4 text model: freqs_cis = torch.polar(1, angle) * a in complex64, never cast; the
//     content cast to fp32, multiplied as complex numbers in fp32 (interleaved pairs 2i, 2i + 1), cast back):
//     stages 1-2 as huggingface, fp32 tables, the rotation in fp32 stored in the model dtype. The pairing does not
//     change the statistics of q, k ~ N(0, I).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/encoding.hpp"
#include "ropekit/precision/dtype.hpp"
#include "ropekit/precision/pipelines.hpp"

namespace ropekit {

/// A pipeline (its row of pipelines.hpp) in a model dtype.
struct Pipeline {
  PipelineKind kind = PipelineKind::huggingface;
  Dtype dtype = Dtype::fp32;            ///< the model dtype (tables); tf32: fp32 tables, angles by a TF32 matmul
  Dtype inv_freq_dtype = Dtype::fp32;   ///< the dtype inv_freq is held in (a buffer cast with the model: bf16)
  Dtype angle_dtype = Dtype::fp32;      ///< the dtype the angle product is rounded to (tf32: see above)
};

/// The dtype the cos / sin tables are held in: the row's (fp32 for ggml's f32 tensors and llama4's complex64
/// freqs_cis), else the model dtype, but fp32 for tf32 (fp32 tables, TF32 angle matmul).
Dtype table_dtype(const Pipeline& p);

/// The options a plan's encoding and pipeline came from, as refusals name them: `encoding` (the spelling quoted) or
/// `model` (`given` quoted: the model file and layer type); `pipeline`, or `model` for the pipeline its file implies.
struct PlanSource {
  std::string encoding_option = "encoding", given, pipeline_option = "pipeline";
};

/// The encoding's rotated pairs as a pipeline sees them: exact (float64) and held inverse frequencies.
struct PrecisionPlan {
  Pipeline pipeline;
  std::vector<double> theta_exact, theta_held;
  double attention_factor = 1;       ///< exact (float64): the reference tables are a cos, a sin
  double held_attention_factor = 1;  ///< the fp32 value the framework multiplies its tables by
  double ggml_theta_scale = 0;  ///< ggml: powf(base, -2/r)
  double ggml_freq_scale = 1;   ///< ggml: 1/s (linear, YaRN), else 1 (fp32)
  double ggml_attn_factor = 1;  ///< ggml: rope_yarn's attn_factor argument (fp32)
  std::vector<double> ggml_ramp;  ///< ggml YaRN: the extrapolation weight per pair (fp32); empty otherwise
};
/// @throws InputError unless the encoding has one 1-D geometric or explicit schedule (rope family), or for ggml a
///         geometric RoPE without scaling or with linear or YaRN, or when the pipeline does not take the model dtype
///         (check_pipeline_dtype); names `command` and the options of `source`.
PrecisionPlan plan_precision(const std::string& command, const Encoding& e, const Pipeline& p,
                             std::optional<double> seq_len = {}, const PlanSource& source = {});

/// @throws InputError naming --dtype, the pipeline's option and the row's reason when the pipeline does not take
///         p.dtype.
void check_pipeline_dtype(const Where& where, const Pipeline& p, const PlanSource& source = {});

/// One pair at one position, each value exactly as the framework holds it (widened to double).
struct HeldPair {
  double inv_freq, angle, cos, sin;
};
std::vector<HeldPair> held_table(const PrecisionPlan& plan, double position);

/// One position's rotated pairs as arrays, what the pipeline holds (angle, the cos / sin tables) and the exact
/// values beside it (a cos(p theta_exact), a sin(p theta_exact) in double, within 2 ulp). Reused across positions:
/// no allocation once sized. The angles are reduced by 2 pi in double-double (error < 1e-21 rad up to 2^40 rad), so
/// the cosines of angles up to 2^31 rad keep their relative accuracy, and the vector sincos (core/vecmath.hpp) does
/// the rest.
struct HeldArrays {
  std::vector<double> angle, cos, sin, exact_cos, exact_sin;
  std::vector<double> held_hi, held_lo, exact_hi, exact_lo, s, c;  ///< working space: reduced angles, sincos
};
void fill_held(const PrecisionPlan& plan, double position, HeldArrays& out);

/// Per position: the largest errors over the rotated pairs.
struct PhaseErrors {
  double phase_error_max;     ///< |angle - p theta_exact| wrapped to [-pi, pi]
  double inv_freq_part_max;   ///< |p (theta_held - theta_exact)|, unwrapped
  double angle_part_max;      ///< |angle - p theta_held|: the rounding of the angle itself
  double table_error_max;     ///< max(|cos - a cos(p theta_exact)|, |sin - a sin(p theta_exact)|)
  double table_phase_error_max;  ///< |atan2(sin, cos) - p theta_exact| wrapped: the phase the tables carry
};
PhaseErrors phase_errors(const PrecisionPlan& plan, double position);

/// The largest position in [0, 2^31 - 1] up to which every angle and table entry the pipeline holds is finite (fp16
/// angles overflow past 65504: positions from 65520 on round to inf); -1 if none is. Angles grow with the position, so
/// the bound is found by bisection.
double largest_finite_position(const PrecisionPlan& plan);

/// Positions: integers in [0, 2^31 - 1].
/// @throws InputError naming the position and the range.
void check_position(const Where& where, double position, std::string_view name = "position");

}  // namespace ropekit
