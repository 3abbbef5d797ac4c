#include "ropekit/models/base_bound.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"

namespace ropekit {

namespace {

// Lags per kernel() call: from 256, doubling to 16384 (memory bounded; an early negative lag costs little).
constexpr std::int64_t kFirstBlock = 256, kLastBlock = 16384;

constexpr std::int64_t kAnchor = 1024;  // lags between exact cos/sin anchors of the rotation recurrence

// RoPE's kernel up to its positive normaliser: sum_i cos(theta_i m) + identity/2, stepped by the angle-addition
// recurrence (c, s) <- (c cos t - s sin t, s cos t + c sin t), re-anchored with exact cos/sin every kAnchor lags so
// the error stays ~kAnchor eps. Only its sign is used. The first m in 1..max_lag where it is negative.
std::optional<std::int64_t> first_negative_rotation(const Eigen::VectorXd& theta, double identity_pairs,
                                                    std::int64_t max_lag) {
  const auto n = theta.size();
  Eigen::ArrayXd c(n), s(n), ct = theta.array().cos(), st = theta.array().sin();
  for (std::int64_t m = 1; m <= max_lag; ++m) {
    if ((m - 1) % kAnchor == 0) {
      check_cancelled();
      c = (theta.array() * static_cast<double>(m)).cos();
      s = (theta.array() * static_cast<double>(m)).sin();
    } else {
      const Eigen::ArrayXd next_c = c * ct - s * st;
      s = s * ct + c * st;
      c = next_c;
    }
    if (c.sum() + identity_pairs < 0) return m;
  }
  return std::nullopt;
}

// Whether e's kernel has a negative value on 1..max_lag: RoPE's by the recurrence (its kernel is the mean of the
// cosines when no attention factor weighs rotated against identity dims), every other family by kernel().
bool has_negative_lag(const Encoding& e, std::int64_t max_lag, std::optional<double> seq_len) {
  if (std::holds_alternative<enc::Rope>(e.value)) {
    const FrequencyTable f = frequencies(e, seq_len);
    if (f.theta.cols() == 1 && (f.identity_dims == 0 || f.attention_factor == 1))
      return first_negative_rotation(f.theta.col(0), f.identity_dims / 2.0, max_lag).has_value();
  }
  return first_negative_lag(e, max_lag, seq_len).has_value();
}

}  // namespace

namespace {

// Phi on lags 1..max_lag, block by block, each value to `visit(lag, phi)` until it returns false.
template <class Visit>
void for_each_lag(const Encoding& e, std::int64_t max_lag, std::optional<double> seq_len, std::string_view who,
                  Visit visit) {
  if (max_lag < 1) throw_bad_value(Where(std::string(who)), "max_lag", std::to_string(max_lag), ">= 1");
  std::int64_t block = kFirstBlock;
  for (std::int64_t start = 1; start <= max_lag; start += block, block = std::min(2 * block, kLastBlock)) {
    check_cancelled();
    const std::int64_t count = std::min(block, max_lag - start + 1);
    Lags lags(count, 1);
    for (std::int64_t i = 0; i < count; ++i) lags(i, 0) = static_cast<double>(start + i);
    const Eigen::VectorXd phi = kernel(e, lags, seq_len);
    for (std::int64_t i = 0; i < count; ++i)
      if (!visit(start + i, phi[i])) return;
  }
}

}  // namespace

std::optional<NegativeLag> first_negative_lag(const Encoding& e, std::int64_t max_lag, std::optional<double> seq_len) {
  std::optional<NegativeLag> out;
  for_each_lag(e, max_lag, seq_len, "ropekit::first_negative_lag", [&](std::int64_t lag, double phi) {
    if (phi < 0) out = NegativeLag{lag, phi};
    return !out;
  });
  return out;
}

KernelScan scan_kernel(const Encoding& e, std::int64_t max_lag, std::optional<double> seq_len) {
  KernelScan out;
  for_each_lag(e, max_lag, seq_len, "ropekit::scan_kernel", [&](std::int64_t lag, double phi) {
    if (phi < out.min) out.min = phi, out.argmin = lag;
    if (phi < 0 && !out.first_negative) out.first_negative = NegativeLag{lag, phi};
    return true;
  });
  return out;
}

BaseBound smallest_nonnegative_base(const Encoding& e, std::int64_t max_lag, std::optional<double> seq_len,
                                    const BaseScan& scan) {
  const Where where("ropekit::smallest_nonnegative_base");
  const FrequencySchedule* schedule = schedule_of(e);
  if (!schedule || !std::holds_alternative<Geometric>(schedule->source))
    throw_bad_value(where, "encoding", "'" + spelling(e) + "'",
                    "an encoding with a geometric frequency schedule (dim and base)");
  if (!(scan.lo > 0 && scan.hi >= scan.lo && std::isfinite(scan.hi) && scan.per_decade >= 1))
    throw_bad_value(where, "scan", fmt::format("[{}, {}] x {}/decade", scan.lo, scan.hi, scan.per_decade),
                    "0 < lo <= hi < inf and at least 1 point per decade");
  BaseBound out;
  Encoding probe = e;
  auto& g = std::get<Geometric>(schedule_of(probe)->source);
  const double decades = std::log10(scan.hi / scan.lo);
  const int steps = static_cast<int>(std::floor(decades * scan.per_decade + 1e-9));
  for (int j = 0; j <= steps; ++j) {
    const double base = scan.lo * std::pow(10.0, static_cast<double>(j) / scan.per_decade);
    if (!(base > 1)) continue;
    g.base = base;
    ++out.tried;
    if (!has_negative_lag(probe, max_lag, seq_len)) {
      out.base = base;
      return out;
    }
  }
  return out;
}

}  // namespace ropekit
