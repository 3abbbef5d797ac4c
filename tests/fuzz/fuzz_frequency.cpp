// Fuzz harness: frequency-file text (parse_frequency_text, what `file:PATH` spectra read), then the
// empirical kernel and sampling of what parsed.

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/spectral/spectrum.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    const spectral::Empirical e = parse_frequency_text(fuzz::as_text(data, size), "fuzz.txt");
    fuzz::require(e.w.rows() >= 1 && e.w.cols() >= 1 && e.w.cols() <= kMaxDims && e.w.allFinite(),
                  fmt::format("frequency text parsed to a {} x {} matrix (finite: {})", e.w.rows(), e.w.cols(),
                              e.w.allFinite()));
    const Spectrum s = e;
    const auto k = static_cast<std::size_t>(dims(s));
    fuzz::require(kernel_values(s, std::vector<double>(k, 0.0)).phi == 1, "Phi(0) != 1");
    for (double d : {1e-3, 0.75, 3.0}) {
      const KernelValues v = kernel_values(s, std::vector<double>(k, d));
      // A mean of cosines lies in [-1, 1]; 1e-12 allows the rounding of the sum, not an error.
      fuzz::require(std::isfinite(v.phi) && std::fabs(v.phi) <= 1 + 1e-12 && std::isfinite(v.var_cos) &&
                        std::isfinite(v.var_sin),
                    fmt::format("lag {}: phi={} var_cos={} var_sin={}", d, v.phi, v.var_cos, v.var_sin));
    }
    constexpr std::size_t n = 4;
    std::vector<double> w(n * k);
    Rng rng(7, 0);
    sample(s, rng, n, w.data());
    for (double x : w) fuzz::require(std::isfinite(x), fmt::format("sampled frequency {}", x));
    if (has_quantile(s)) {
      const double q = quantile(s, 0.5);
      fuzz::require(std::isfinite(q), fmt::format("Q(0.5) = {}", q));
    }
  });
}
