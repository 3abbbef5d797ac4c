// ropekit_bench: timings behind `make bench` (wall clock, median of repeats, this machine).
// Speed is measured here and reported, never asserted in tests.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.hpp"

namespace ropekit::bench {

double median_ms(const std::function<void()>& f, int repeats) {
  std::vector<double> t;
  f();  // warm-up
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace ropekit::bench

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  for (const auto& s : ropekit::bench::suites())
    if (only.empty() || only == s.name) {
      fmt::print("## {}\n\n", s.name);
      s.run();
      fmt::print("\n");
    }
  return 0;
}
