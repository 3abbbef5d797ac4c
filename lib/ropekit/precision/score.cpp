#include "ropekit/precision/score.hpp"

#include <cmath>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/no_fp_contract.hpp"  // each product and sum rounded on its own, as eager framework ops

namespace ropekit {

namespace {

// x rotated with a held table (the table depends on the position only: score_errors builds it once per position).
std::vector<double> rotate_with(const PrecisionPlan& plan, const std::vector<HeldPair>& held, const std::vector<double>& x) {
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

// a cos(p theta_exact) and a sin(p theta_exact) (pipeline.hpp's fill_held: double, within 2 ulp), once per position.
struct ExactTable {
  std::vector<long double> cos, sin;
};
ExactTable exact_table(const PrecisionPlan& plan, double position) {
  HeldArrays h;
  fill_held(plan, position, h);
  return {{h.exact_cos.begin(), h.exact_cos.end()}, {h.exact_sin.begin(), h.exact_sin.end()}};
}
std::vector<long double> rotate_exact_with(const ExactTable& t, const std::vector<double>& x) {
  const std::size_t m = t.cos.size();
  std::vector<long double> out(2 * m);
  for (std::size_t i = 0; i < m; ++i) {
    out[i] = x[i] * t.cos[i] - x[i + m] * t.sin[i];
    out[i + m] = x[i + m] * t.cos[i] + x[i] * t.sin[i];
  }
  return out;
}

}  // namespace

std::vector<double> rotate_held(const PrecisionPlan& plan, const std::vector<double>& x, double position) {
  return rotate_with(plan, held_table(plan, position), x);
}

std::vector<long double> rotate_exact(const PrecisionPlan& plan, const std::vector<double>& x, double position) {
  return rotate_exact_with(exact_table(plan, position), x);
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
  const auto held_q = held_table(plan, position + lag), held_k = held_table(plan, position);
  const ExactTable exact_q = exact_table(plan, position + lag), exact_k = exact_table(plan, position);
  for (std::int64_t t = 0; t < trials; ++t) {
    if (t % 256 == 0) check_cancelled();
    for (auto& v : q) v = round_to(d, round_to(Dtype::fp32, rng.normal()));  // fp32 draws cast to the model dtype
    for (auto& v : k) v = round_to(d, round_to(Dtype::fp32, rng.normal()));
    const double held = held_score(rotate_with(plan, held_q, q), rotate_with(plan, held_k, k));
    const auto qe = rotate_exact_with(exact_q, q), ke = rotate_exact_with(exact_k, k);
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
