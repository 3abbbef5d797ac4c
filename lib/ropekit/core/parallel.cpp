#include "ropekit/core/parallel.hpp"

#include "ropekit/core/cancel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ropekit {

int default_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& task) {
  const std::size_t workers = std::min<std::size_t>(n, static_cast<std::size_t>(threads > 0 ? threads : default_threads()));
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) {
      check_cancelled();
      task(i);
    }
    return;
  }
  // Workers see the caller's cancel flag (cancel.hpp) and stop between tasks once it is set.
  const std::atomic<bool>* cancel = current_cancel_flag();
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    const CancelScope scope(cancel);
    for (std::size_t i; !failed && (i = next.fetch_add(1)) < n;) {
      try {
        check_cancelled();
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ropekit
