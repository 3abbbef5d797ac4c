#pragma once
#include <functional>
#include <string>
#include <vector>

namespace ropekit::bench {
/// Median wall time of f over `repeats` runs after one warm-up, in milliseconds.
double median_ms(const std::function<void()>& f, int repeats);

struct Suite {
  std::string name;
  std::function<void()> run;  ///< prints a Markdown table of its measurements
};
/// Every benchmark suite; each bench_*.cpp adds its own to the list in bench_suites.cpp.
const std::vector<Suite>& suites();
}  // namespace ropekit::bench
