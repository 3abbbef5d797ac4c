#include "ropekit/precision/first_position.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "ropekit/core/cancel.hpp"
#include "ropekit/precision/score.hpp"

namespace ropekit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Half the spacing of D at x >= 0 (the largest |fl_D(y) - y| for y <= x, normal or subnormal); +inf past D's
// largest finite value. Nondecreasing in x.
double half_ulp(Dtype d, double x) {
  const DtypeInfo info = dtype_info(d);
  if (x >= std::ldexp(2.0, info.max_exponent)) return kInf;
  const int e = x > 0 ? std::max(std::ilogb(x), info.min_exponent) : info.min_exponent;
  return std::ldexp(1.0, e - info.precision);
}

// True when v exceeds the tolerance; NaN (an angle past its dtype's range) counts as exceeding.
bool exceeds(double v, double tolerance) { return !(v <= tolerance); }

// p_j of a segment.
double at(const LagStream::Segment& s, std::int64_t j) { return s.start + static_cast<double>(j) * s.step; }

}  // namespace

double phase_error_bound(const PrecisionPlan& plan, double p) {
  const Pipeline& pipe = plan.pipeline;
  double bound = 0;
  if (pipe.kind == PipelineKind::ggml) {
    // running_i = fl32(p) then i products by S, each rounded; theta = fs running (1 - ramp) + running ramp with one
    // rounding per product, for 1 - ramp and for the sum: |angle_i - p t_i| <= ((1 + u)^(i+6) - 1) p t_i with
    // t_i = S^i (fs (1 - ramp_i) + ramp_i) >= 0 in double, plus p |t_i - theta_exact_i|.
    const double u = std::ldexp(1.0, -24), S = plan.ggml_theta_scale, fs = plan.ggml_freq_scale;
    for (std::size_t i = 0; i < plan.theta_exact.size(); ++i) {
      const double ramp = plan.ggml_ramp.empty() ? 0.0 : plan.ggml_ramp[i];
      const double t = std::pow(S, static_cast<double>(i)) * (fs * (1 - ramp) + ramp);
      const double rounding = std::pow(1 + u, static_cast<double>(i + 6)) - 1;
      bound = std::max(bound, p * (rounding * t + std::abs(t - plan.theta_exact[i])));
    }
  } else {
    // angle = fl_prod(fl_in(p) fl_in(theta_held)): |angle - p theta_exact| <= half_ulp_prod(P' T') + |P' - p| T'
    // + p |T' - theta_exact|, with |P' - p| <= half_ulp_in(p) once p is past D's exact integers.
    const bool tf32 = pipe.dtype == Dtype::tf32 || pipe.angle_dtype == Dtype::tf32;
    const Dtype in = tf32 ? Dtype::tf32 : pipe.angle_dtype, prod = tf32 ? Dtype::fp32 : pipe.angle_dtype;
    const double exact_up_to = std::ldexp(1.0, dtype_info(in).precision);
    const double p_error = p <= exact_up_to ? 0 : half_ulp(in, p);
    if (std::isinf(round_to(in, p))) return kInf;
    for (std::size_t i = 0; i < plan.theta_held.size(); ++i) {
      const double t = round_to(in, plan.theta_held[i]);
      bound = std::max(bound, half_ulp(prod, (p + p_error) * t) + p_error * t + p * std::abs(t - plan.theta_exact[i]));
    }
  }
  // The phase error itself is computed in double: a relative margin far above its rounding.
  return bound * (1 + 1e-9) + 1e-300;
}

FirstPosition first_phase_position(const PrecisionPlan& plan, const std::vector<LagStream::Segment>& positions,
                                   double tolerance) {
  FirstPosition out;
  out.quantity = "phase_error_max";
  out.tolerance = tolerance;
  out.search = "exact";
  // A wrapped phase is at most pi (and the last ulp of its reduction): nothing to look for at or past it.
  if (tolerance >= std::numbers::pi + 1e-12) return out;
  for (const auto& s : positions) {
    // The first index whose bound reaches the tolerance: before it no position can exceed (bound nondecreasing).
    std::int64_t lo = 0, hi = s.count;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (phase_error_bound(plan, at(s, mid)) >= tolerance) hi = mid;
      else lo = mid + 1;
    }
    for (std::int64_t j = lo; j < s.count; ++j) {
      if (out.evaluated % 4096 == 0) check_cancelled();
      const double p = at(s, j), v = phase_errors(plan, p).phase_error_max;
      ++out.evaluated;
      if (exceeds(v, tolerance)) {
        out.position = p;
        out.value = v;
        return out;
      }
      out.value = std::max(out.value, v);
    }
  }
  return out;
}

FirstPosition first_score_position(const PrecisionPlan& plan, const std::vector<LagStream::Segment>& positions,
                                   double tolerance, double lag, std::int64_t trials, std::uint64_t seed) {
  FirstPosition out;
  out.quantity = "score_rms_rel_error";
  out.lag = lag;
  out.tolerance = tolerance;
  out.search = "bisection";
  auto value = [&](double p) {
    check_cancelled();
    ++out.evaluated;
    return score_errors(plan, lag, p, trials, seed).rms_rel;
  };
  for (const auto& s : positions) {
    // Probes j = 0, 1, ... growing by 2^(1/16) (at least 1), and the segment's last index.
    std::int64_t below = -1;  // the last probe within the tolerance
    for (std::int64_t j = 0;;) {
      const double v = value(at(s, j));
      if (exceeds(v, tolerance)) {
        std::int64_t hi = j;
        double hi_value = v;
        while (hi - below > 1 && below >= 0) {
          const std::int64_t mid = below + (hi - below) / 2;
          const double m = value(at(s, mid));
          if (exceeds(m, tolerance)) {
            hi = mid;
            hi_value = m;
          } else {
            below = mid;
          }
        }
        out.position = at(s, hi);
        out.value = hi_value;
        return out;
      }
      out.value = std::max(out.value, v);
      below = j;
      if (j == s.count - 1) break;
      const auto next = static_cast<std::int64_t>(std::ceil(static_cast<double>(j) * 1.0442737824274138));  // 2^(1/16)
      j = std::min(std::max(next, j + 1), s.count - 1);
    }
  }
  return out;
}

}  // namespace ropekit
