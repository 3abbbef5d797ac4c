#include "bench/bench.hpp"

namespace ropekit::bench {
void fixed_basis_suite();
void rf_rope_suite();
void kernel_suite();

const std::vector<Suite>& suites() {
  static const std::vector<Suite> s = {
      {"fixed-basis", fixed_basis_suite},
      {"rf-rope", rf_rope_suite},
      {"kernel", kernel_suite},
  };
  return s;
}
}  // namespace ropekit::bench
