#include "ropekit/precision/pipeline.hpp"

#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/no_fp_contract.hpp"  // every product rounded on its own, as the frameworks' kernels

namespace ropekit {

namespace {

// x - 2 pi k nearest to 0, in long double (p theta reaches 2^31: the difference needs more than double's bits).
long double wrap(long double x) {
  const long double two_pi = 2 * std::numbers::pi_v<long double>;
  const long double turns = x / two_pi;  // |x| < 2^62 rad here: the nearest integer fits an int64
  const auto k = static_cast<std::int64_t>(turns >= 0 ? turns + 0.5L : turns - 0.5L);
  return x - two_pi * static_cast<long double>(k);
}

// fl32 of a float32 function value: the double result rounded once (cos and sin of a float are correctly rounded
// this way but for the rare double-rounding ties: the spec's "cos correctly rounded").
double f32(double x) { return round_to(Dtype::fp32, x); }

}  // namespace

PipelineKind parse_pipeline(std::string_view text, const Where& where) {
  if (text == "huggingface" || text == "hf" || text == "transformers") return PipelineKind::huggingface;
  if (text == "ggml" || text == "llama.cpp") return PipelineKind::ggml;
  if (text == "vllm") return PipelineKind::vllm;
  if (text == "flash" || text == "flash-attention") return PipelineKind::flash;
  throw_bad_value(where, "pipeline", quote(std::string(text)), "huggingface, ggml, vllm or flash");
}

std::string_view pipeline_name(PipelineKind p) {
  switch (p) {
    case PipelineKind::huggingface: return "huggingface";
    case PipelineKind::ggml: return "ggml";
    case PipelineKind::vllm: return "vllm";
    case PipelineKind::flash: return "flash";
  }
  throw std::logic_error("pipeline_name: unknown pipeline");
}

void check_position(const Where& where, double position, std::string_view name) {
  if (!(position >= 0 && position <= 2147483647.0 && std::floor(position) == position))
    throw_bad_value(where, name, format_number(position), "an integer in [0, 2^31 - 1]");
}

PrecisionPlan plan_precision(const std::string& command, const Encoding& e, const Pipeline& p,
                             std::optional<double> seq_len) {
  const Where where = Where::options(command);
  if (!std::holds_alternative<enc::Rope>(e.value))
    throw_bad_value(where, "encoding", quote(spelling(e)), "a rope encoding (rope:..., rope-freqs:...; the frameworks' RoPE)");
  PrecisionPlan plan;
  plan.pipeline = p;
  const FrequencyTable exact = for_encoding(command, spelling(e), [&] { return frequencies(e, seq_len); });
  if (exact.theta.cols() != 1) throw_bad_value(where, "encoding", quote(spelling(e)), "1-D frequencies");
  plan.attention_factor = exact.attention_factor;
  plan.theta_exact.assign(exact.theta.data(), exact.theta.data() + exact.theta.rows());
  if (p.kind == PipelineKind::ggml) {
    const FrequencySchedule* s = schedule_of(e);
    const auto* g = s ? std::get_if<Geometric>(&s->source) : nullptr;
    if (!g || !std::holds_alternative<scaling::None>(s->scaling) || g->partial != 1)
      throw_bad_value(where, "pipeline", "ggml",
                      "huggingface for this encoding (the ggml pipeline is modelled for plain RoPE: rope:dim,base)");
    // ggml's running product at position 1 (the frequencies' own ggml grid); its ratio powf(base, -2/n) steps the
    // angles of every other position.
    const auto grid = scaling::ggml_grid<float>(g->base, g->dim, static_cast<int>(plan.theta_exact.size()));
    plan.theta_held.assign(grid.begin(), grid.end());
    plan.ggml_theta_scale = grid.size() > 1 ? grid[1] : 0;
    return plan;
  }
  const FrequencyTable held =
      for_encoding(command, spelling(e), [&] { return frequencies(e, seq_len, Convention::huggingface, true); });
  for (Eigen::Index i = 0; i < held.theta.rows(); ++i) plan.theta_held.push_back(round_to(p.inv_freq_dtype, held.theta(i, 0)));
  // Proportional RoPE's buffer holds its identity pairs as zero frequencies (cos 1, sin 0): transformers' tables do.
  const FrequencySchedule* s = schedule_of(e);
  if (s && std::holds_alternative<scaling::Proportional>(s->scaling)) {
    plan.theta_exact.resize(plan.theta_exact.size() + static_cast<std::size_t>(exact.identity_dims / 2), 0.0);
    plan.theta_held.resize(plan.theta_exact.size(), 0.0);
  }
  return plan;
}

std::vector<HeldPair> held_table(const PrecisionPlan& plan, double position) {
  const Pipeline& p = plan.pipeline;
  std::vector<HeldPair> out;
  out.reserve(plan.theta_held.size());
  const double a = f32(plan.attention_factor);
  // Tables: fl32(cos) (times fl32(a), rounded, when a != 1), then cast to the model dtype (tf32: fp32 tables).
  const Dtype table_dtype = p.dtype == Dtype::tf32 ? Dtype::fp32 : p.dtype;
  auto table = [&](double v) { return round_to(table_dtype, a == 1 ? f32(v) : f32(f32(v) * a)); };
  if (p.kind == PipelineKind::ggml) {
    double angle = f32(position);
    for (std::size_t i = 0; i < plan.theta_held.size(); ++i) {
      if (i) angle = f32(angle * plan.ggml_theta_scale);
      out.push_back({plan.theta_held[i], angle, f32(f32(std::cos(angle)) * a), f32(f32(std::sin(angle)) * a)});
    }
    return out;
  }
  for (const double theta : plan.theta_held) {
    double angle = 0;
    if (p.dtype == Dtype::tf32 || p.angle_dtype == Dtype::tf32) {
      angle = f32(round_to(Dtype::tf32, position) * round_to(Dtype::tf32, theta));  // TF32 matmul: inputs rounded
    } else {
      const Dtype d = p.angle_dtype;
      angle = round_to(d, round_to(d, position) * round_to(d, theta));
    }
    out.push_back({theta, angle, table(std::cos(angle)), table(std::sin(angle))});
  }
  return out;
}

PhaseErrors phase_errors(const PrecisionPlan& plan, double position) {
  const auto held = held_table(plan, position);
  PhaseErrors e{0, 0, 0, 0, 0};
  const long double P = position;
  for (std::size_t i = 0; i < held.size(); ++i) {
    // p theta_exact in long double (64 bits: exact to 1e-10 rad at 2^31), reduced to [-pi, pi]; the cosines and the
    // phase of the tables in double from there (1e-16: far below the errors measured).
    const long double exact = P * static_cast<long double>(plan.theta_exact[i]);
    const auto reduced = static_cast<double>(wrap(exact));
    const long double angle = held[i].angle;
    e.phase_error_max = std::max(e.phase_error_max, static_cast<double>(std::abs(wrap(angle - exact))));
    e.inv_freq_part_max = std::max(
        e.inv_freq_part_max,
        static_cast<double>(std::abs(P * (static_cast<long double>(held[i].inv_freq) - plan.theta_exact[i]))));
    e.angle_part_max = std::max(e.angle_part_max, static_cast<double>(std::abs(angle - P * held[i].inv_freq)));
    const double a = plan.attention_factor;
    e.table_phase_error_max = std::max(
        e.table_phase_error_max, static_cast<double>(std::abs(wrap(std::atan2(held[i].sin, held[i].cos) - reduced))));
    e.table_error_max = std::max({e.table_error_max, std::abs(held[i].cos - a * std::cos(reduced)),
                                  std::abs(held[i].sin - a * std::sin(reduced))});
  }
  return e;
}

}  // namespace ropekit
