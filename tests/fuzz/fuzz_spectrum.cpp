// Fuzz harness: spectrum spellings (parse_spectrum), then the kernel, sampling, quantile and density of what
// parsed, at a few fixed lags. `file:` spellings are skipped here (they read the filesystem); the file
// format itself is fuzzed by fuzz_frequency.cpp through parse_frequency_text.

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/spectral/spectrum.hpp"

using namespace ropekit;

namespace {

// |Phi| <= 1 for a characteristic function; rounding of a sum/product of terms each in [-1, 1] can
// exceed it by a few ulps only, so 1e-12 flags real errors (such as Phi = 22.3) and not rounding.
constexpr double kSlack = 1e-12;

void check_kernel(const Spectrum& s, const std::string& name, const std::vector<double>& lag) {
  const KernelValues v = kernel_values(s, lag);
  const std::string at = fmt::format("spectrum '{}' at lag {}: ", name, fmt::join(lag, ","));
  fuzz::require(std::isfinite(v.phi) && std::isfinite(v.phi2) && std::isfinite(v.psi) && std::isfinite(v.psi2) &&
                    std::isfinite(v.var_cos) && std::isfinite(v.var_sin),
                at + fmt::format("non-finite kernel values phi={} phi2={} var_cos={} var_sin={}", v.phi, v.phi2,
                                 v.var_cos, v.var_sin));
  fuzz::require(std::fabs(v.phi) <= 1 + kSlack && std::fabs(v.phi2) <= 1 + kSlack,
                at + fmt::format("|Phi| > 1: phi={} phi2={}", v.phi, v.phi2));
  // psi = 1 - Phi is computed on its own route; the two agree to the kernels' accuracy goal (1e-12
  // relative, numbers <= 2); 1e-10 leaves room for that and still flags a wrong branch (errors >= 1e-8).
  fuzz::require(std::fabs(v.psi - (1 - v.phi)) <= 1e-10,
                at + fmt::format("psi={} but 1 - phi={}", v.psi, 1 - v.phi));
  // Variances of cos u and sin u lie in [0, 1].
  fuzz::require(v.var_cos >= -kSlack && v.var_cos <= 1 + kSlack && v.var_sin >= -kSlack && v.var_sin <= 1 + kSlack,
                at + fmt::format("variance outside [0, 1]: var_cos={} var_sin={}", v.var_cos, v.var_sin));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  const auto first = text.find_first_not_of(" \t");
  if (first != std::string_view::npos && text.substr(first).rfind("file:", 0) == 0) return 0;
  return fuzz::run([&] {
    const Spectrum s = parse_spectrum(text);
    const std::string name = spelling(s);
    // The spelling parses back to the same value (spectrum.hpp's promise).
    const Spectrum back = fuzz::must("parse_spectrum(spelling(s))", [&] { return parse_spectrum(name); });
    fuzz::require(spelling(back) == name, fmt::format("spelling round trip: '{}' -> '{}'", name, spelling(back)));

    const int k = dims(s);
    // Phi(0) = 1: exactly for most families; a mixture sums its normalised weights, which round (1e-12
    // allows ~1e4 terms of 1 ulp each).
    const KernelValues at0 = kernel_values(s, std::vector<double>(static_cast<std::size_t>(k), 0.0));
    fuzz::require(std::fabs(at0.phi - 1) <= kSlack && std::fabs(at0.psi) <= kSlack,
                  fmt::format("spectrum '{}': Phi(0) = {}, 1 - Phi(0) = {}, must be 1 and 0", name, at0.phi, at0.psi));
    for (double d : {1e-7, 1e-3, 0.75, 3.0, 1e3}) {
      check_kernel(s, name, std::vector<double>(static_cast<std::size_t>(k), d));
      std::vector<double> axis(static_cast<std::size_t>(k), 0.0);
      axis[0] = -d;  // a negative lag on one axis (Phi is even): the sign handling
      check_kernel(s, name, axis);
    }

    // The density (not shown to users: it may leave the float64 range, but not be NaN or negative).
    const double p = density(s, std::vector<double>(static_cast<std::size_t>(k), 0.5));
    fuzz::require(p >= 0, fmt::format("spectrum '{}': density {} at 0.5", name, p));
    // What sampling uses, once check_samplable accepts the spectrum (as every sampling command does first):
    // the 1-D quantiles (stratified sampling) and a few draws, all finite (an infinite frequency makes every
    // score NaN).
    check_samplable(s, name);
    if (has_quantile(s)) {
      const double q1 = quantile(s, 0.25), q3 = quantile(s, 0.75);
      fuzz::require(std::isfinite(q1) && std::isfinite(q3) && q1 <= q3,
                    fmt::format("spectrum '{}': quantiles Q(0.25) = {}, Q(0.75) = {}", name, q1, q3));
    }
    constexpr std::size_t n = 4;
    std::vector<double> w(n * static_cast<std::size_t>(k));
    Rng rng(20240521, 0);
    sample(s, rng, n, w.data());
    for (double x : w) fuzz::require(std::isfinite(x), fmt::format("spectrum '{}': sampled frequency {}", name, x));
  });
}
