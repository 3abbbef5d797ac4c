// fit's summary (fit/fit_summary.hpp): per target and eval length, the methods ranked by their mean eval MSE.
#include <doctest/doctest.h>

#include <cmath>

#include "ropekit/fit/fit_summary.hpp"

using namespace ropekit;

namespace {
FitRow row(std::int64_t seed, const char* target, const char* method, int context, const char* split, double mse) {
  FitRow r;
  r.seed = seed, r.target = target, r.method = method, r.context = context, r.split = split, r.mse = mse;
  return r;
}
}  // namespace

TEST_CASE("summarize_fit: the means over seeds rank the methods; train rows, ties and a lone method") {
  const std::vector<FitRow> rows = {
      row(0, "phase", "rope", 1024, "train", 0.0),  // train rows never count (a zero here would win otherwise)
      row(0, "phase", "rope", 1024, "eval", 4.0), row(1, "phase", "rope", 1024, "eval", 2.0),      // mean 3
      row(0, "phase", "alibi", 1024, "eval", 1.0), row(1, "phase", "alibi", 1024, "eval", 6.0),    // mean 3.5
      row(0, "phase", "jordan", 1024, "eval", 0.5), row(1, "phase", "jordan", 1024, "eval", 5.0),  // mean 2.75
      row(0, "phase", "rope", 8192, "eval", 1.0), row(0, "phase", "alibi", 8192, "eval", 1.0),     // a tie
      row(0, "linear", "rope", 8192, "eval", 7.0)};                                                // one method
  const auto s = summarize_fit(rows);
  REQUIRE(s.size() == 3);
  CHECK(s[0].target == "phase");
  CHECK(s[0].context == 1024);
  CHECK(s[0].best == "jordan");
  CHECK(s[0].best_mse == 2.75);
  CHECK(s[0].runner_up == "rope");
  CHECK(s[0].runner_up_mse == 3.0);
  CHECK(s[0].methods == 3);
  CHECK(s[0].seeds == 2);
  CHECK(s[1].best == "rope");  // the tie goes to the method listed first
  CHECK(s[1].runner_up == "alibi");
  CHECK(s[2].target == "linear");
  CHECK(s[2].best == "rope");
  CHECK(s[2].runner_up.empty());
  CHECK(std::isnan(s[2].runner_up_mse));
  CHECK(summarize_fit({}).empty());
}
