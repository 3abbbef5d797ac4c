// Fuzz harness: number lists and ranges (parse_number_list) and k-dimensional lag lists (parse_lags, k = 1..3),
// with their invariants: finite values, the requested bound on the count, a range's values in [start, stop).

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "ropekit/core/spelling.hpp"

using namespace ropekit;

namespace {

// The harness's own reading of a lone range "start:stop[:step]" (no commas), to check the values against.
struct Range {
  double start, stop, step;
};
std::optional<Range> lone_range(std::string_view text) {
  if (text.find(',') != std::string_view::npos) return std::nullopt;
  std::vector<double> parts;
  while (true) {
    const auto colon = text.find(':');
    const auto v = parse_double(text.substr(0, colon));
    if (!v) return std::nullopt;
    parts.push_back(*v);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  return Range{parts[0], parts[1], parts.size() == 3 ? parts[2] : 1.0};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::run([&] {
    // A small cap keeps iterations fast; the bound itself is what is exercised.
    constexpr std::size_t cap = 1 << 12;
    const std::vector<double> v = parse_number_list(text, "--lags", cap);
    fuzz::require(!v.empty() && v.size() <= cap, fmt::format("'{}': {} values", text, v.size()));
    for (double x : v) fuzz::require(std::isfinite(x), fmt::format("'{}': value {}", text, x));
    if (const auto r = lone_range(text)) {
      // Stop is excluded; start is the first value; the values step up by `step`.
      fuzz::require(v.front() == r->start, fmt::format("'{}': first value {}", text, v.front()));
      for (double x : v)
        fuzz::require(x >= r->start && x < r->stop,
                      fmt::format("'{}': value {} outside [start, stop) = [{}, {})", text, x, r->start, r->stop));
      // Count: no value is missing, so the next one, start + n step, is at or beyond stop.
      const double next = r->start + static_cast<double>(v.size()) * r->step;
      fuzz::require(next >= r->stop, fmt::format("'{}': {} values, but start + {} step = {} is still below stop",
                                                 text, v.size(), v.size(), next));
    }
  });
  for (int k = 1; k <= 3; ++k)
    fuzz::run([&] {
      const Eigen::MatrixXd lags = parse_lags(text, k);
      fuzz::require(lags.rows() >= 1 && lags.cols() == k && lags.allFinite(),
                    fmt::format("parse_lags('{}', {}): {} x {}", text, k, lags.rows(), lags.cols()));
      for (Eigen::Index i = 0; i < std::min<Eigen::Index>(lags.rows(), 4); ++i) {
        // lag_text writes a lag the way parse_lags reads it back.
        const Eigen::RowVectorXd row = lags.row(i);
        const std::string t = lag_text(std::span<const double>(row.data(), static_cast<std::size_t>(k)));
        const Eigen::MatrixXd back = fuzz::must("parse_lags(lag_text(lag))", [&] { return parse_lags(t, k); });
        fuzz::require(back.rows() == 1 && back.row(0) == row, fmt::format("lag_text round trip '{}'", t));
      }
    });
  return 0;
}
