// budget.hpp: the memory budget, the searches for the largest size that fits, and the refusal message.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>

#include "ropekit/core/budget.hpp"

using namespace ropekit;

TEST_CASE("the memory budget is half the physical memory") {
  const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  CHECK(memory_budget_bytes() == doctest::Approx(physical / 2).epsilon(1e-12));  // same integers, one halving
}

TEST_CASE("largest_fitting finds the boundary of a monotone predicate") {
  CHECK(largest_fitting(1, 1000, [](std::int64_t n) { return n * n <= 500; }) == 22);  // 22^2 = 484, 23^2 = 529
  CHECK(largest_fitting(1, 1000, [](std::int64_t) { return true; }) == 1000);
  CHECK(largest_fitting(5, 1000, [](std::int64_t) { return false; }) == 4);
  CHECK(largest_fitting(1, INT64_MAX, [](std::int64_t n) { return n <= 123456789012345LL; }) == 123456789012345LL);
  // Bisection on log x to about 1e-7 relative: the boundary sqrt(2) of x^2 <= 2.
  const double r = largest_fitting_real(1e-300, 1e300, [](double x) { return x * x <= 2; });
  CHECK(r == doctest::Approx(std::sqrt(2.0)).epsilon(1e-6));
  CHECK(r * r <= 2);
  CHECK(largest_fitting_real(1, 10, [](double) { return false; }) == 0);
}

TEST_CASE("a cost beyond the budget is refused with the value, the limit and the excess") {
  const Where w = Where::options("ropekit features");
  const Cost huge_memory{1e18, 1};
  CHECK(!huge_memory.fits());
  CHECK_THROWS_WITH_AS(check_cost(w, "num_freqs", "40000000", huge_memory, "1296", "for jordan:m=32"),
                       doctest::Contains("ropekit features: --num-freqs = 40000000 (must be at most 1296 for "
                                         "jordan:m=32: 40000000 needs 1e+06 TB of memory, over the budget of"),
                       std::invalid_argument);
  const Cost long_run{1, 1e6};
  CHECK(!long_run.fits());
  CHECK(long_run.excess().find("2.8e+02 h") != std::string::npos);  // 1e6 s = 277.8 h
  CHECK(Cost{1e3, 1}.fits());
  CHECK_NOTHROW(check_cost(w, "lags", "8", Cost{1e3, 1}, "", ""));
  CHECK(format_bytes(2.5e9) == "2.5 GB");
  CHECK(format_duration(90) == "1.5 min");
}
