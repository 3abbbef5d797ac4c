#pragma once
// The base bound of Men et al. 2024 ("Base of RoPE Bounds Context Length", arXiv 2405.14591, eq. 8-9): a model
// can attend more to similar tokens than to random ones at every lag up to L only if
// B(m) = sum_i cos(m theta_i) >= 0 for m = 0..L, and the smallest base with that property bounds the context from
// below. Here B is the encoding's own kernel Phi (its scheme, partial rotation and identity planes included, so
// Phi = B / (n/2) for plain RoPE) with only the base changed. The criterion is not monotone in the base, so the
// bound is found by scanning a grid upward, never by bisection.

#include <cstdint>
#include <optional>

#include "ropekit/encoding.hpp"

namespace ropekit {

/// The first lag in 1..max_lag where Phi(lag) < 0, with that value; none when Phi >= 0 on all of them.
struct NegativeLag {
  std::int64_t lag = 0;
  double kernel = 0;
};
/// Evaluates Phi in blocks (memory bounded whatever max_lag), stopping at the first negative value; seq_len as for
/// kernel() (dynamic NTK, LongRoPE). Cancellable (check_cancelled between blocks).
/// @throws InputError for max_lag < 1 or a kernel that is not defined (e.g. a non-relative encoding).
std::optional<NegativeLag> first_negative_lag(const Encoding& e, std::int64_t max_lag,
                                              std::optional<double> seq_len = {});

/// Phi on every lag 1..max_lag (the same blocks): its minimum, where, and the first negative value.
struct KernelScan {
  double min = 1;
  std::int64_t argmin = 0;
  std::optional<NegativeLag> first_negative;
};
/// @throws InputError as first_negative_lag.
KernelScan scan_kernel(const Encoding& e, std::int64_t max_lag, std::optional<double> seq_len = {});

/// The scan: bases lo * 10^(j / per_decade), j = 0, 1, ..., up to hi (those > 1; a scheme needs base > 1).
struct BaseScan {
  double lo = 10, hi = 1e12;
  int per_decade = 32;
};
struct BaseBound {
  std::optional<double> base;  ///< the smallest grid base with Phi >= 0 on 1..max_lag; none when no grid base has it
  int tried = 0;               ///< grid bases evaluated
};
/// Men et al.'s bound for `e`'s geometric schedule over lags 1..max_lag.
/// @throws InputError unless e has a geometric frequency schedule (rope, damped, jordan, ... with dim and base).
BaseBound smallest_nonnegative_base(const Encoding& e, std::int64_t max_lag, std::optional<double> seq_len = {},
                                    const BaseScan& scan = {});

}  // namespace ropekit
