#include "ropekit/core/parallel.hpp"

#include "ropekit/core/cancel.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace ropekit {

int default_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

namespace {

// One parallel_for call: tasks are claimed from `next`; the first exception is kept for the caller.
struct Job {
  std::size_t n = 0;
  const std::function<void(std::size_t)>* task = nullptr;
  const std::atomic<bool>* cancel = nullptr;  // the caller's flag (cancel.hpp), seen by every worker
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;

  void work() {
    const CancelScope scope(cancel);
    for (std::size_t i; !failed && (i = next.fetch_add(1)) < n;) {
      try {
        check_cancelled();
        (*task)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  }
};

// The CPUs the process may use, less the calling thread's current one (empty when that leaves none).
cpu_set_t other_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpu_set_t{};
  const int here = sched_getcpu();
  if (here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &set);
  return set;
}

// Starts a detached thread running f (run() places it before each job).
pthread_t start_worker(std::function<void()> f) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  auto* start = new std::function<void()>(std::move(f));
  pthread_t thread;
  const int err = pthread_create(
      &thread, &attr,
      [](void* p) -> void* {
        const std::unique_ptr<std::function<void()>> f(static_cast<std::function<void()>*>(p));
        (*f)();
        return nullptr;
      },
      start);
  pthread_attr_destroy(&attr);
  if (err != 0) {
    delete start;
    throw std::system_error(err, std::generic_category(), "ropekit: cannot start a worker thread");
  }
  return thread;
}

// Workers that live for the whole process and sleep on a condition variable between jobs (waking one takes 3 us),
// so the dozen short parallel loops of a fixed-basis suite (a millisecond or so each) start at once.
// Placement: before each job the workers are confined to the CPUs other than the caller's. Left to itself, the
// scheduler starts a new thread on its parent's CPU and often wakes a worker on the waker's; on a 2-vCPU VM both
// threads then shared one CPU for a whole 6 ms loop (measured), and a new thread waited 0.6 ms to start.
class Pool {
 public:
  // Runs job on `helpers` workers beside the calling thread; false (nothing run) when the pool is busy with
  // another caller's job (a nested loop, or two Python threads): the caller then starts threads of its own.
  bool run(Job& job, std::size_t helpers) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    const cpu_set_t elsewhere = other_cpus();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      try {
        while (threads_.size() < helpers) {
          const std::size_t id = threads_.size();
          threads_.push_back(start_worker([this, id] { loop(id); }));
        }
      } catch (const std::system_error&) {
        helpers = threads_.size();  // no more threads to be had: run on those there are (the caller's at least)
      }
      if (CPU_COUNT(&elsewhere) > 0)  // also moves a thread just started, which begins on the caller's CPU
        for (std::size_t id = 0; id < helpers; ++id) pthread_setaffinity_np(threads_[id], sizeof elsewhere, &elsewhere);
      job_ = &job;
      wanted_ = helpers;
      running_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    job.work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return running_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  void loop(std::size_t id) {
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (id >= wanted_) continue;  // this job asked for fewer workers
      Job* job = job_;
      lock.unlock();
      job->work();
      lock.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }

  std::mutex busy_;   // held by the caller whose job runs
  std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_, done_;
  std::vector<pthread_t> threads_;  // started so far; they never exit, and only ever sleep once the process ends
  Job* job_ = nullptr;
  std::size_t wanted_ = 0, running_ = 0;
  std::uint64_t generation_ = 0;
};

// The process's pool, never destroyed (its sleeping workers end with the process). A child after fork() has none
// of the parent's threads: it starts a new pool (the old one's locks may be held; it is left alone).
Pool* g_pool = nullptr;

Pool& pool() {
  static const bool installed = [] {
    g_pool = new Pool;
    pthread_atfork(nullptr, nullptr, [] { g_pool = new Pool; });
    return true;
  }();
  (void)installed;
  return *g_pool;
}

}  // namespace

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& task) {
  const std::size_t workers = std::min<std::size_t>(n, static_cast<std::size_t>(threads > 0 ? threads : default_threads()));
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) {
      check_cancelled();
      task(i);
    }
    return;
  }
  Job job;
  job.n = n;
  job.task = &task;
  job.cancel = current_cancel_flag();
  if (!pool().run(job, workers - 1)) {
    std::vector<std::thread> extra;
    for (std::size_t w = 1; w < workers; ++w) extra.emplace_back([&job] { job.work(); });
    job.work();
    for (auto& t : extra) t.join();
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace ropekit
