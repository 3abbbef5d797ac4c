// Fuzz harness: `lag,value` kernel tables (parse_kernel_table, read by fit-params --target data:, --kernel-data
// and design --kernel data:), then the even grid design needs (kernel_grid). Invariants of what parsed: finite
// values, lags >= 0 and strictly increasing; a grid starts at Phi(0) = 1 within its tolerance.

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/design/design.hpp"
#include "targets/kernel_table.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  return fuzz::run([&] {
    const KernelTable t = parse_kernel_table(text, "fuzz.csv", "fuzz");
    fuzz::require(t.lag.size() >= 1 && t.lag.size() == t.value.size(), "a table of at least one row");
    for (Eigen::Index i = 0; i < t.lag.size(); ++i) {
      fuzz::require(std::isfinite(t.lag[i]) && t.lag[i] >= 0 && std::isfinite(t.value[i]),
                    fmt::format("row {}: lag {} value {} must be finite, lag >= 0", i, t.lag[i], t.value[i]));
      fuzz::require(i == 0 || t.lag[i] > t.lag[i - 1], fmt::format("row {}: lags must increase", i));
    }
    const KernelGrid g = kernel_grid(t, "fuzz");
    fuzz::require(g.step > 0 && std::isfinite(g.step) && g.phi.size() == t.value.size() &&
                      std::fabs(g.phi[0] - 1) <= kPhiZeroTolerance,
                  fmt::format("grid: step {} and Phi(0) {} ", g.step, g.phi[0]));
  });
}
