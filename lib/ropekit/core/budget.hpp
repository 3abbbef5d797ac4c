#pragma once
// Budgets for request sizes the user controls. Memory and work are estimated up front in double
// arithmetic (never in int, which overflows first) and a request beyond its budget is refused with the
// usual one-line message, naming the value and the largest one that fits.
//   memory: half the physical memory (sysconf), 8 GiB if it cannot be read;
//   work:   kMaxRunSeconds of estimated run time; runs estimated above kNoticeSeconds get a notice;
//   output: kMaxOutputBytes of streamed text.
// Run-time estimates count operations at rates measured on the project's reference machine (2 cores,
// Xeon @ 2.8 GHz, AVX-512), divided by about 5 so that slower machines (AVX2) are covered: they are
// bounds for refusing and announcing, not predictions.

#include <cstdint>
#include <functional>
#include <string>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// Runs estimated beyond this are refused (what would take hours).
inline constexpr double kMaxRunSeconds = 2 * 3600.0;
/// Runs estimated beyond this say what they are doing on stderr when they start.
inline constexpr double kNoticeSeconds = 2.0;
/// The most a streamed (command-line) table may write, in bytes: a request whose text would exceed it is refused
/// before its first row (issue 32: `precision --table` ran silently to tens of GB).
inline constexpr double kMaxOutputBytes = 4e9;

/// Conservative rates (see above; measured: 5e10 flop/s in Eigen's products and QR on both cores, 4e8 to 1e9
/// Monte Carlo angles per second, 2e8 scalar sin/cos per second).
inline constexpr double kFlopsPerSecond = 1e10;    ///< dense float64 linear algebra (Eigen)
inline constexpr double kAnglesPerSecond = 2e8;    ///< Monte Carlo angle evaluations (sincos + sampling)
inline constexpr double kElementsPerSecond = 5e7;  ///< scalar work per element (exp, pow, sin, cos)

/// The memory one request may use, in bytes.
double memory_budget_bytes();
/// "1.2 GB", "512 MB", "3.1e+05 TB".
std::string format_bytes(double bytes);
/// "0.4 s", "12 s", "9.2 min", "3.1 h", "2.3e+05 h".
std::string format_duration(double seconds);

/// Largest n in [lo, hi] with fits(n), fits true up to some n and false beyond; lo - 1 if fits(lo) is false.
std::int64_t largest_fitting(std::int64_t lo, std::int64_t hi, const std::function<bool(std::int64_t)>& fits);
/// Largest x in [lo, hi] (0 < lo < hi, finite) with fits(x), to ~1e-6 relative (bisection on log x);
/// 0 if fits(lo) is false.
double largest_fitting_real(double lo, double hi, const std::function<bool(double)>& fits);

/// A request's estimated memory and run time.
struct Cost {
  double bytes = 0;
  double seconds = 0;
  bool fits() const;  ///< within memory_budget_bytes() and kMaxRunSeconds
  /// "needs 2.1 GB over the memory budget of 12 GB (half the physical memory)" or "would take about
  /// 3.1 h (estimated), over the cap of 2 h": why it does not fit ("" if it does).
  std::string excess() const;
};

/// If cost does not fit: @throws InputError "<where>: <name> = <value> (must be at most <limit>
/// <for_what>: <value> <cost.excess()>)"; `limit` the largest value that fits, from the caller.
void check_cost(const Where& where, std::string_view name, std::string_view value, const Cost& cost,
                std::string_view limit, std::string_view for_what);

}  // namespace ropekit
