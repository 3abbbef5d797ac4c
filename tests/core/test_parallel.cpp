// parallel_for (core/parallel.hpp) on its process-wide worker pool: every task once, errors rethrown, and the
// paths where the pool is busy (a nested loop, two calling threads) or gone (a forked child).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ropekit/core/parallel.hpp"

using namespace ropekit;

namespace {
// True when parallel_for(n, threads) calls every index exactly once.
bool each_once(std::size_t n, int threads) {
  std::vector<std::atomic<int>> calls(n);
  parallel_for(n, threads, [&](std::size_t i) { calls[i].fetch_add(1); });
  for (auto& c : calls)
    if (c.load() != 1) return false;
  return true;
}
}  // namespace

TEST_CASE("parallel_for calls every index once, for any task and thread count (more threads than cores too)") {
  for (int threads : {0, 1, 2, 3, 8})
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1000}}) {
      CAPTURE(threads);
      CAPTURE(n);
      CHECK(each_once(n, threads));
    }
}

TEST_CASE("parallel_for rethrows a task's exception and stops handing out tasks") {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    std::atomic<int> ran{0};
    // Tasks of 100 us: the 10000 would take half a second; the throw is seen within a task or two.
    CHECK_THROWS_WITH_AS(parallel_for(10000, threads,
                                      [&](std::size_t i) {
                                        ran.fetch_add(1);
                                        if (i == 3) throw std::runtime_error("task 3");
                                        std::this_thread::sleep_for(std::chrono::microseconds(100));
                                      }),
                         "task 3", std::runtime_error);
    CHECK(ran.load() < 100);
    if (threads == 1) CHECK(ran.load() == 4);  // inline: tasks 0..3, in order
  }
  CHECK(each_once(100, 2));  // the pool is usable again
}

TEST_CASE("a parallel_for inside a task, and two threads calling at once, both complete (the busy pool's fallback)") {
  std::vector<std::atomic<int>> calls(16 * 16);
  parallel_for(16, 2, [&](std::size_t i) {
    parallel_for(16, 2, [&](std::size_t j) { calls[i * 16 + j].fetch_add(1); });
  });
  for (auto& c : calls) CHECK(c.load() == 1);
  std::atomic<bool> a{false}, b{false};
  std::thread other([&] {
    for (int r = 0; r < 50; ++r) a = each_once(200, 2) || a;
  });
  for (int r = 0; r < 50; ++r) b = each_once(200, 2) || b;
  other.join();
  CHECK(a.load());
  CHECK(b.load());
}

TEST_CASE("a forked child runs parallel_for on a pool of its own (the parent's workers do not exist there)") {
  CHECK(each_once(64, 2));  // the parent's pool has its workers
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(each_once(64, 2) && each_once(1000, 3) ? 0 : 1);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
