#include "reports/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "ropekit/core/budget.hpp"

namespace ropekit {

void announce(std::string_view label, std::string_view what, double estimated_seconds) {
  if (!(estimated_seconds >= kNoticeSeconds)) return;
  fmt::print(stderr, "{}: {}; estimated at most {}{}\n", label, what, format_duration(estimated_seconds),
             ::isatty(STDERR_FILENO) == 1 ? " (progress below)" : "");
  std::fflush(stderr);
}

Progress::Progress(std::string label, double delay_seconds)
    : label_(std::move(label)), delay_(delay_seconds), enabled_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() { finish(); }

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (printed_) std::fputs("\r\033[K", stderr);
  printed_ = false;
  enabled_ = false;
}

void Progress::update(double fraction) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < delay_ || std::chrono::duration<double>(now - last_).count() < 0.2) return;
  last_ = now;
  printed_ = true;
  fmt::print(stderr, "\r{}: {:3.0f}% ({:.1f} s)", label_, 100 * fraction, elapsed);
  std::fflush(stderr);
}

std::function<void(double)> Progress::part(int index, int parts) {
  return [this, index, parts](double f) { update((index + f) / parts); };
}

}  // namespace ropekit
