// The kernel of Llama 3.1 8B's encoding at a few lags, from C++ through the installed library: build with
// cmake -S examples -B b -DCMAKE_PREFIX_PATH=<ropekit's install prefix> && cmake --build b && b/kernel_example
#include <fmt/format.h>

#include "ropekit/encoding.hpp"

int main() {
  const ropekit::Encoding e =
      ropekit::parse_encoding("rope:dim=128,base=500000,scaling=llama3(factor=8,low=1,high=4,orig=8192)");
  ropekit::Lags lags(4, 1);
  lags << 0, 1, 1000, 100000;
  const Eigen::VectorXd k = ropekit::kernel(e, lags);  // Phi(Dp) = tr G(Dp) / tr G(0)
  fmt::print("{}\n", ropekit::spelling(e));
  for (Eigen::Index i = 0; i < k.size(); ++i) fmt::print("{} {}\n", lags(i, 0), k[i]);  // shortest round-trip text
  return 0;
}
