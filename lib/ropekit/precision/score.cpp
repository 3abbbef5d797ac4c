// Compiled with -ffp-contract=off (CMakeLists.txt): every product and sum rounded on its own, as eager framework ops.
#include "ropekit/precision/score.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/rng.hpp"

namespace ropekit {

namespace {

// The dtypes of stage 4, from the pipeline's row (pipelines.cpp): transformers rotates in the model dtype (tf32 means
// fp32 tensors), ggml in fp32; vLLM's and flash-attention's kernels in fp32 registers, Llama 4 as complex64 products,
// the result stored in the model dtype.
struct RotationDtypes {
  Dtype ops, store;
};
RotationDtypes rotation_dtypes(const Pipeline& p) {
  const Dtype model = p.dtype == Dtype::tf32 ? Dtype::fp32 : p.dtype;
  const PipelineInfo& info = pipeline_info(p.kind);
  return {info.rotation == StageDtype::model ? model : Dtype::fp32, info.stored == StageDtype::model ? model : Dtype::fp32};
}

// One position's tables, from one fill_held: the held ones as floats (each is a value of its dtype) and a cos /
// a sin of p theta_exact in double.
struct Tables {
  std::vector<float> cos, sin;
  std::vector<double> exact_cos, exact_sin;
};
Tables tables_at(const PrecisionPlan& plan, double position) {
  HeldArrays h;
  fill_held(plan, position, h);
  return {{h.cos.begin(), h.cos.end()}, {h.sin.begin(), h.sin.end()}, std::move(h.exact_cos), std::move(h.exact_sin)};
}

// x rotated with a held table, x1 c - x2 s and x2 c + x1 s (half-split pairs i, i + m). In float arithmetic, exactly
// as in the dtype: a product of two bf16 (fp16) values is exact in fp32, so rounding it to the dtype is its one
// rounding; a sum of two such values is exact in fp32 unless one is below 2^-13 of the other, where both roundings
// give the larger one; fp32 products and sums are float's own.
template <Dtype ops, Dtype store>
void rotate_in(std::size_t m, const float* __restrict c, const float* __restrict s, const float* __restrict x,
               float* __restrict out) {
  for (std::size_t i = 0; i < m; ++i) {
    const float x1 = x[i], x2 = x[i + m];
    const float a = round_from_f32(ops, x1 * c[i]), b = round_from_f32(ops, -x2 * s[i]);
    const float e = round_from_f32(ops, x2 * c[i]), f = round_from_f32(ops, x1 * s[i]);
    out[i] = round_from_f32(store, round_from_f32(ops, a + b));
    out[i + m] = round_from_f32(store, round_from_f32(ops, e + f));
  }
}

void rotate_with(const RotationDtypes& d, const Tables& t, const float* x, float* out) {
  const std::size_t m = t.cos.size();
  const float* c = t.cos.data();
  const float* s = t.sin.data();
  using enum Dtype;
  if (d.ops == fp32 && d.store == fp32) return rotate_in<fp32, fp32>(m, c, s, x, out);
  if (d.ops == fp32 && d.store == bf16) return rotate_in<fp32, bf16>(m, c, s, x, out);
  if (d.ops == fp32 && d.store == fp16) return rotate_in<fp32, fp16>(m, c, s, x, out);
  if (d.ops == bf16) return rotate_in<bf16, bf16>(m, c, s, x, out);
  if (d.ops == fp16) return rotate_in<fp16, fp16>(m, c, s, x, out);
  throw std::logic_error("rotate_with: unexpected dtypes");
}

// x rotated exactly: a cos / a sin of p theta_exact (fill_held, within 2 ulp), in double.
void rotate_exact_with(const Tables& t, const float* __restrict x, double* __restrict out) {
  const std::size_t m = t.exact_cos.size();
  for (std::size_t i = 0; i < m; ++i) {
    const double x1 = x[i], x2 = x[i + m];
    out[i] = x1 * t.exact_cos[i] - x2 * t.exact_sin[i];
    out[i + m] = x2 * t.exact_cos[i] + x1 * t.exact_sin[i];
  }
}

// <q_rot, k_rot> as the framework sums it: fp32 products added in order in fp32.
float sum_in_order(const float* q, const float* k, std::size_t n) {
  float sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += q[i] * k[i];
  return sum;
}

std::vector<float> floats(const std::vector<double>& x) { return {x.begin(), x.end()}; }

}  // namespace

std::vector<double> rotate_held(const PrecisionPlan& plan, const std::vector<double>& x, double position) {
  const auto in = floats(x);
  std::vector<float> out(in.size());
  rotate_with(rotation_dtypes(plan.pipeline), tables_at(plan, position), in.data(), out.data());
  return {out.begin(), out.end()};
}

std::vector<double> rotate_exact(const PrecisionPlan& plan, const std::vector<double>& x, double position) {
  const auto in = floats(x);
  std::vector<double> out(in.size());
  rotate_exact_with(tables_at(plan, position), in.data(), out.data());
  return out;
}

double held_score(const std::vector<double>& q_rot, const std::vector<double>& k_rot) {
  const auto q = floats(q_rot), k = floats(k_rot);
  return sum_in_order(q.data(), k.data(), q.size());
}

ScoreErrors score_errors(const PrecisionPlan& plan, double lag, double position, std::int64_t trials, std::uint64_t seed) {
  const std::size_t n = 2 * plan.theta_exact.size();
  const RotationDtypes dtypes = rotation_dtypes(plan.pipeline);
  const Dtype d = plan.pipeline.dtype == Dtype::tf32 ? Dtype::fp32 : plan.pipeline.dtype;
  ScoreErrors out;
  double sum_sq = 0, sum_q4 = 0, defect_sq = 0;
  Rng rng(seed, kStreamPrecision, 0);
  const Tables at_q = tables_at(plan, position + lag), at_k = tables_at(plan, position);
  // The same pair at the origin (q at lag, k at 0): the relativity defect compares the two held scores.
  const Tables origin_q = tables_at(plan, lag), origin_k = tables_at(plan, 0);
  std::vector<float> q(n), k(n), qr(n), kr(n), qo(n), ko(n);
  std::vector<double> qe(n), ke(n);
  for (std::int64_t t = 0; t < trials; ++t) {
    if (t % 256 == 0) check_cancelled();
    // fp32 draws cast to the model dtype.
    for (auto& v : q) v = round_from_f32(d, static_cast<float>(rng.normal()));
    for (auto& v : k) v = round_from_f32(d, static_cast<float>(rng.normal()));
    rotate_with(dtypes, at_q, q.data(), qr.data());
    rotate_with(dtypes, at_k, k.data(), kr.data());
    rotate_with(dtypes, origin_q, q.data(), qo.data());
    rotate_with(dtypes, origin_k, k.data(), ko.data());
    const double held = sum_in_order(qr.data(), kr.data(), n), at_origin = sum_in_order(qo.data(), ko.data(), n);
    rotate_exact_with(at_q, q.data(), qe.data());
    rotate_exact_with(at_k, k.data(), ke.data());
    // The exact score and the norms in double: 2^-53 n relative, far below the errors reported (>= 1e-9 here).
    double exact = 0, qq = 0, kk = 0;
    for (std::size_t i = 0; i < n; ++i) {
      exact += qe[i] * ke[i];
      qq += static_cast<double>(q[i]) * q[i];
      kk += static_cast<double>(k[i]) * k[i];
    }
    const double norm = std::sqrt(qq * kk);
    const double rel = (held - exact) / norm, moved = (held - at_origin) / norm;
    sum_sq += rel * rel;
    sum_q4 += rel * rel * (rel * rel);
    defect_sq += moved * moved;
    out.max_rel = std::max(out.max_rel, std::abs(rel));
  }
  const auto T = static_cast<double>(trials);
  out.rms_rel = trials ? std::sqrt(sum_sq / T) : 0;
  if (trials >= 2) {
    const double mean = sum_sq / T, var = std::max(0.0, (sum_q4 - sum_sq * mean) / (T - 1));
    const double half = 1.959963984540054 * std::sqrt(var / T);  // the normal distribution's 97.5% quantile
    out.rms_rel_low = std::sqrt(std::max(0.0, mean - half));
    out.rms_rel_high = std::sqrt(mean + half);
  } else {
    out.rms_rel_high = std::numeric_limits<double>::infinity();
  }
  out.defect_rms = trials ? std::sqrt(defect_sq / static_cast<double>(trials)) : 0;
  return out;
}

}  // namespace ropekit
