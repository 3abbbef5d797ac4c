#include "bench/bench.hpp"

namespace ropekit::bench {
void fixed_basis_suite();

const std::vector<Suite>& suites() {
  static const std::vector<Suite> s = {
      {"fixed-basis", fixed_basis_suite},
  };
  return s;
}
}  // namespace ropekit::bench
