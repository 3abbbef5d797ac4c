#pragma once
// Progress for long runs: "\r<label>: 42% (3.1 s)" on stderr, only when stderr is a terminal and only
// once the run has taken longer than a delay (2 s), so short runs, pipes and logs stay clean.

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace ropekit {

/// Says on stderr what is starting when its estimated run time is at least kNoticeSeconds (budget.hpp),
/// whether or not stderr is a terminal (a log then shows why a run is long):
///   "<label>: <what>; estimated at most 12 s"
/// Short runs stay silent, and stdout is never touched.
void announce(std::string_view label, std::string_view what, double estimated_seconds);

class Progress {
 public:
  explicit Progress(std::string label, double delay_seconds = 2.0);
  ~Progress();  ///< ends the progress line if one was printed
  /// Clears the progress line now (before printing a result on stderr); later updates are ignored.
  void finish();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Reports the overall fraction done, in [0, 1]. Thread-safe; prints at most ~5 times a second.
  void update(double fraction);
  /// A callback for part `index` of `parts` equal parts: f -> update((index + f) / parts).
  std::function<void(double)> part(int index, int parts);

 private:
  std::string label_;
  double delay_;
  bool enabled_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mutex_;
};

}  // namespace ropekit
