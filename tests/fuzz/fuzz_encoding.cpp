// Fuzz harness: encoding spellings (parse_encoding: every family, nested scaling schemes and spectra, direct sums,
// reference method names), then the contract on what parsed: the canonical spelling round-trips, and for small
// operators Phi(0) = 1, |Phi| <= 1 for orthogonal families, and finite content variances >= 0.

#include <cmath>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/encoding.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    const Encoding e = parse_encoding(fuzz::as_text(data, size));
    const std::string canon = spelling(e);
    const std::string again = spelling(parse_encoding(canon));
    fuzz::require(again == canon, fmt::format("spelling '{}' reads back as '{}'", canon, again));
    if (!is_relative(e) || operator_dim(e) > 512) return;  // cost grows with n; larger adds time, not code paths
    const int k = lag_dims(e);
    Lags lags = Lags::Zero(5, k);
    const double values[] = {0, 1e-8, 1, -10, 1e3};
    for (int i = 0; i < 5; ++i) lags(i, 0) = values[i];
    const auto rows = kernel_rows(e, lags, 0.5);
    fuzz::require(std::fabs(rows[0].kernel - 1) <= 1e-12, fmt::format("'{}': Phi(0) = {}", canon, rows[0].kernel));
    for (int i = 0; i < 5; ++i) {
      const auto& r = rows[static_cast<std::size_t>(i)];
      // Means of cosines lie in [-1, 1]; 1e-12 allows the rounding of the sums.
      if (is_orthogonal(e))
        fuzz::require(std::fabs(r.kernel) <= 1 + 1e-12, fmt::format("'{}' lag {}: Phi = {}", canon, values[i], r.kernel));
      fuzz::require(!(r.content_variance < 0), fmt::format("'{}' lag {}: variance {}", canon, values[i], r.content_variance));
    }
  });
}
