#pragma once
// Cooperative cancellation of long library calls (the Python module's Ctrl-C). A caller installs a flag for its
// thread with a CancelScope; long loops call check_cancelled() between chunks of work (parallel_for's tasks, the
// fit's streamed windows, Monte Carlo chunks), which throws Cancelled once the flag is set. parallel_for hands the
// calling thread's flag to its workers. Without a scope nothing is ever cancelled and the check costs one load.

#include <atomic>
#include <exception>

namespace ropekit {

/// Thrown by check_cancelled() after the installed flag was set; not an InputError (nothing was wrong with the input).
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "ropekit: cancelled"; }
};

/// Installs `flag` as this thread's cancel flag for the scope's lifetime (restoring the previous one).
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>* flag);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

/// This thread's flag (nullptr: none installed).
const std::atomic<bool>* current_cancel_flag();

/// @throws Cancelled if this thread's flag is set.
void check_cancelled();

}  // namespace ropekit
