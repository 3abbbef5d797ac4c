#include "ropekit/precision/first_position.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
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
  if (ggml_angle(pipeline_info(pipe.kind).angle)) {
    // running_i = fl32(p) then i products by S, each rounded; theta = fs running (1 - ramp) + running ramp with one
    // rounding per product, for 1 - ramp and for the sum (the FMA variant rounds fewer times):
    // |angle_i - p t_i| <= ((1 + u)^(i+6) - 1) p t_i with t_i = S^i (fs (1 - ramp_i) + ramp_i) >= 0 in double, plus p |t_i - theta_exact_i|.
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

std::string_view quantity_name(PhaseQuantity q) {
  switch (q) {
    case PhaseQuantity::phase_error_max: return "phase_error_max";
    case PhaseQuantity::table_phase_error_max: return "table_phase_error_max";
    case PhaseQuantity::table_error_max: return "table_error_max";
  }
  throw std::logic_error("quantity_name: unknown quantity");
}

double quantity_of(const PhaseErrors& e, PhaseQuantity q) {
  switch (q) {
    case PhaseQuantity::phase_error_max: return e.phase_error_max;
    case PhaseQuantity::table_phase_error_max: return e.table_phase_error_max;
    case PhaseQuantity::table_error_max: return e.table_error_max;
  }
  throw std::logic_error("quantity_of: unknown quantity");
}

namespace {

// e of quantity_bound: how far stage 3 puts a table entry from a32 cos(angle).
double table_rounding(const PrecisionPlan& plan) {
  const double a32 = std::abs(plan.held_attention_factor);
  return a32 * 0x1p-23 + half_ulp(table_dtype(plan.pipeline), a32 * (1 + 0x1p-22));
}

// The largest value q can take (a wrapped phase: pi and the last ulps of its reduction; an entry: a32 + e + a).
double quantity_cap(const PrecisionPlan& plan, PhaseQuantity q) {
  if (q != PhaseQuantity::table_error_max) return std::numbers::pi + 1e-12;
  return (std::abs(plan.held_attention_factor) + table_rounding(plan) + std::abs(plan.attention_factor)) * (1 + 1e-9);
}

}  // namespace

double quantity_bound(const PrecisionPlan& plan, double p, PhaseQuantity q) {
  const double angle = phase_error_bound(plan, p);
  if (q == PhaseQuantity::phase_error_max) return angle;
  const double e = table_rounding(plan), a32 = std::abs(plan.held_attention_factor);
  if (q == PhaseQuantity::table_phase_error_max) {
    const double moved = a32 > 0 ? std::asin(std::min(1.0, std::sqrt(2.0) * e / a32)) : std::numbers::pi;
    return (angle + moved) * (1 + 1e-9);
  }
  return (e + std::abs(a32 - std::abs(plan.attention_factor)) + std::abs(plan.attention_factor) * angle) * (1 + 1e-9);
}

FirstPosition first_phase_position(const PrecisionPlan& plan, const std::vector<LagStream::Segment>& positions,
                                   double tolerance, PhaseQuantity q) {
  FirstPosition out;
  out.quantity = quantity_name(q);
  out.tolerance = tolerance;
  out.search = "exact";
  // Nothing to look for at or past the quantity's largest value.
  if (tolerance >= quantity_cap(plan, q)) return out;
  for (const auto& s : positions) {
    // The first index whose bound reaches the tolerance: before it no position can exceed (bound nondecreasing).
    std::int64_t lo = 0, hi = s.count;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (quantity_bound(plan, at(s, mid), q) >= tolerance) hi = mid;
      else lo = mid + 1;
    }
    for (std::int64_t j = lo; j < s.count; ++j) {
      if (out.evaluated % 4096 == 0) check_cancelled();
      const double p = at(s, j), v = quantity_of(phase_errors(plan, p), q);
      ++out.evaluated;
      if (exceeds(v, tolerance)) {
        out.position = out.position_low = out.position_high = p;
        out.value = v;
        return out;
      }
      out.value = std::max(out.value, v);
    }
  }
  return out;
}

namespace {

// The first crossing of one curve (16 probes per octave of each segment, then bisection to adjacent positions): the
// position and its value, none if the curve stays within the tolerance over the positions given.
template <class Value>
std::optional<std::pair<double, double>> first_crossing(const std::vector<LagStream::Segment>& positions,
                                                        double tolerance, const Value& value, double& largest) {
  for (const auto& s : positions) {
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
        return std::pair{at(s, hi), hi_value};
      }
      largest = std::max(largest, v);
      below = j;
      if (j == s.count - 1) break;
      const auto next = static_cast<std::int64_t>(std::ceil(static_cast<double>(j) * 1.0442737824274138));  // 2^(1/16)
      j = std::min(std::max(next, j + 1), s.count - 1);
    }
  }
  return std::nullopt;
}

}  // namespace

FirstPosition first_score_position(const PrecisionPlan& plan, const std::vector<LagStream::Segment>& positions,
                                   double tolerance, double lag, std::int64_t trials, std::uint64_t seed) {
  FirstPosition out;
  out.quantity = "score_rms_rel_error";
  out.lag = lag;
  out.tolerance = tolerance;
  out.search = "bisection";
  // The three searches probe the same positions: each is evaluated once.
  std::map<double, ScoreErrors> seen;
  const auto errors = [&](double p) -> const ScoreErrors& {
    auto it = seen.find(p);
    if (it == seen.end()) {
      check_cancelled();
      ++out.evaluated;
      it = seen.emplace(p, score_errors(plan, lag, p, trials, seed)).first;
    }
    return it->second;
  };
  double ignored = 0;
  if (const auto f = first_crossing(positions, tolerance, [&](double p) { return errors(p).rms_rel; }, out.value)) {
    out.position = f->first;
    out.value = f->second;
  }
  if (const auto f = first_crossing(positions, tolerance, [&](double p) { return errors(p).rms_rel_high; }, ignored))
    out.position_low = f->first;
  if (const auto f = first_crossing(positions, tolerance, [&](double p) { return errors(p).rms_rel_low; }, ignored))
    out.position_high = f->first;
  return out;
}

}  // namespace ropekit
