#include "ropekit/precision/score.hpp"

#include <cmath>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/no_fp_contract.hpp"  // each product and sum rounded on its own, as eager framework ops

namespace ropekit {

std::vector<double> rotate_held(const PrecisionPlan& plan, const std::vector<double>& x, double position) {
  const auto held = held_table(plan, position);
  const std::size_t m = held.size();
  // transformers rotates in the model dtype (tf32 means fp32 tensors); ggml in fp32; vLLM's and flash-attention's
  // kernels in fp32 registers, the result stored in the model dtype.
  const PipelineKind k = plan.pipeline.kind;
  const Dtype model = plan.pipeline.dtype == Dtype::tf32 ? Dtype::fp32 : plan.pipeline.dtype;
  const Dtype d = k == PipelineKind::huggingface ? model : Dtype::fp32;
  const Dtype store = k == PipelineKind::vllm || k == PipelineKind::flash ? model : d;
  auto fl = [&](double v) { return round_to(d, v); };
  std::vector<double> out(2 * m);
  for (std::size_t i = 0; i < m; ++i) {
    const double c = held[i].cos, s = held[i].sin, x1 = x[i], x2 = x[i + m];
    out[i] = round_to(store, fl(fl(x1 * c) + fl(-x2 * s)));
    out[i + m] = round_to(store, fl(fl(x2 * c) + fl(x1 * s)));
  }
  return out;
}

std::vector<long double> rotate_exact(const PrecisionPlan& plan, const std::vector<double>& x, double position) {
  const std::size_t m = plan.theta_exact.size();
  std::vector<long double> out(2 * m);
  for (std::size_t i = 0; i < m; ++i) {
    const long double angle = static_cast<long double>(position) * plan.theta_exact[i];
    const long double c = std::cos(angle) * plan.attention_factor, s = std::sin(angle) * plan.attention_factor;
    out[i] = x[i] * c - x[i + m] * s;
    out[i + m] = x[i + m] * c + x[i] * s;
  }
  return out;
}

double held_score(const std::vector<double>& q_rot, const std::vector<double>& k_rot) {
  float sum = 0;
  for (std::size_t i = 0; i < q_rot.size(); ++i) sum += static_cast<float>(q_rot[i]) * static_cast<float>(k_rot[i]);
  return sum;
}

ScoreErrors score_errors(const PrecisionPlan& plan, double lag, double position, std::int64_t trials, std::uint64_t seed) {
  const std::size_t n = 2 * plan.theta_exact.size();
  const Dtype d = plan.pipeline.dtype == Dtype::tf32 ? Dtype::fp32 : plan.pipeline.dtype;
  ScoreErrors out;
  double sum_sq = 0;
  Rng rng(seed, kStreamPrecision, 0);
  std::vector<double> q(n), k(n);
  for (std::int64_t t = 0; t < trials; ++t) {
    if (t % 256 == 0) check_cancelled();
    for (auto& v : q) v = round_to(d, round_to(Dtype::fp32, rng.normal()));  // fp32 draws cast to the model dtype
    for (auto& v : k) v = round_to(d, round_to(Dtype::fp32, rng.normal()));
    const double held = held_score(rotate_held(plan, q, position + lag), rotate_held(plan, k, position));
    const auto qe = rotate_exact(plan, q, position + lag), ke = rotate_exact(plan, k, position);
    long double exact = 0, qq = 0, kk = 0;
    for (std::size_t i = 0; i < n; ++i) {
      exact += qe[i] * ke[i];
      qq += static_cast<long double>(q[i]) * q[i];
      kk += static_cast<long double>(k[i]) * k[i];
    }
    const double rel = static_cast<double>((held - exact) / std::sqrt(qq * kk));
    sum_sq += rel * rel;
    out.max_rel = std::max(out.max_rel, std::abs(rel));
  }
  out.rms_rel = trials ? std::sqrt(sum_sq / static_cast<double>(trials)) : 0;
  return out;
}

}  // namespace ropekit
