// Fuzz harness: encoding spellings (parse_rope_encoding, `kernel --encoding rope:dim=<d>,base=<B>`), then
// RoPE's kernel at a few lags when the grid is small enough for a fast iteration.

#include <cmath>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/encodings/rope_kernel.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    const RopeGrid g = parse_rope_encoding(fuzz::as_text(data, size));
    fuzz::require(g.dim >= 2 && g.dim % 2 == 0 && g.base > 1 && std::isfinite(g.base),
                  fmt::format("parsed dim = {}, base = {}", g.dim, g.base));
    if (g.dim > 4096) return;  // cost is linear in dim; larger grids add time, not code paths
    const RopeKernelValues v0 = rope_kernel(g, 0);
    fuzz::require(v0.kernel == 1 && v0.sine_residual == 0 && v0.continuum == 1,
                  fmt::format("dim {} base {}: kernel(0) = {}, continuum(0) = {}", g.dim, g.base, v0.kernel, v0.continuum));
    for (double lag : {1.0, -10.0, 1e3, 1e12}) {
      const RopeKernelValues v = rope_kernel(g, lag);
      // Means of cosines and sines lie in [-1, 1]; 1e-12 allows the rounding of the sums.
      fuzz::require(std::fabs(v.kernel) <= 1 + 1e-12 && std::fabs(v.sine_residual) <= 1 + 1e-12 &&
                        std::isfinite(v.continuum) && std::isfinite(v.continuum_sine),
                    fmt::format("dim {} base {} lag {}: kernel {} sine {} continuum {} continuum_sine {}", g.dim,
                                g.base, lag, v.kernel, v.sine_residual, v.continuum, v.continuum_sine));
    }
  });
}
