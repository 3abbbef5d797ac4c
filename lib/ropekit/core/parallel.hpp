#pragma once
// A minimal parallel loop over independent tasks. Results must not depend on the thread count:
// each task writes only its own outputs, so scheduling order never changes a number.
// The loops run on a process-wide pool of sleeping workers (started on first use, kept to the end), placed on the
// CPUs other than the caller's before each loop; a loop started while the pool is busy (nested, or from a second
// thread) starts threads of its own.

#include <cstddef>
#include <functional>

namespace ropekit {

/// Default worker count: the machine's hardware threads (at least 1).
int default_threads();

/// Calls task(i) for i in [0, n) on up to `threads` threads (<= 0: default_threads()).
/// The first exception thrown by a task is rethrown after all workers stop.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& task);

}  // namespace ropekit
