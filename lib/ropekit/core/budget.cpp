#include "ropekit/core/budget.hpp"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

namespace ropekit {

double memory_budget_bytes() {
  static const double budget = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return 8.0 * (1ull << 30);
    return 0.5 * static_cast<double>(pages) * static_cast<double>(page);
  }();
  return budget;
}

std::string format_bytes(double bytes) {
  if (bytes < 1e6) return fmt::format("{:.0f} kB", bytes / 1e3);
  if (bytes < 1e9) return fmt::format("{:.0f} MB", bytes / 1e6);
  if (bytes < 1e12) return fmt::format("{:.1f} GB", bytes / 1e9);
  return fmt::format("{:.2g} TB", bytes / 1e12);
}

std::string format_duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.2g} s", seconds);
  if (seconds < 3600) return fmt::format("{:.2g} min", seconds / 60);
  return fmt::format("{:.2g} h", seconds / 3600);
}

std::int64_t largest_fitting(std::int64_t lo, std::int64_t hi, const std::function<bool(std::int64_t)>& fits) {
  if (!fits(lo)) return lo - 1;
  while (lo < hi) {  // invariant: fits(lo)
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

double largest_fitting_real(double lo, double hi, const std::function<bool(double)>& fits) {
  if (!fits(lo)) return 0;
  if (fits(hi)) return hi;
  double a = std::log(lo), b = std::log(hi);  // fits(e^a), !fits(e^b)
  for (int i = 0; i < 100 && b - a > 1e-7; ++i) {
    const double mid = 0.5 * (a + b);
    if (fits(std::exp(mid))) a = mid;
    else b = mid;
  }
  return std::exp(a);
}

bool Cost::fits() const { return bytes <= memory_budget_bytes() && seconds <= kMaxRunSeconds; }

std::string Cost::excess() const {
  if (!(bytes <= memory_budget_bytes()))
    return fmt::format("needs {} of memory, over the budget of {} (half the physical memory)", format_bytes(bytes),
                       format_bytes(memory_budget_bytes()));
  if (!(seconds <= kMaxRunSeconds))
    return fmt::format("would take about {} (a conservative estimate), over the cap of {}", format_duration(seconds),
                       format_duration(kMaxRunSeconds));
  return "";
}

void check_cost(const Where& where, std::string_view name, std::string_view value, const Cost& cost,
                std::string_view limit, std::string_view for_what) {
  if (cost.fits()) return;
  throw_bad_value(where, name, value,
                  fmt::format("at most {}{}{}: {} {}", limit, for_what.empty() ? "" : " ", for_what, value,
                              cost.excess()));
}

}  // namespace ropekit
