#pragma once
// Seeded random streams for Monte Carlo runs whose numbers do not depend on the thread count:
// every stream is keyed by (seed, stream, index) (e.g. index = chunk of trials), never shared.
// Generator: xoshiro256++ (Blackman and Vigna 2019), state filled by splitmix64 from the key.

#include <cstddef>
#include <cstdint>

namespace ropekit {

/// The default seed of every ropekit Monte Carlo run (reports print the seed they used).
constexpr std::uint64_t kDefaultSeed = 20240521;

class Rng {
 public:
  /// An independent stream for (seed, stream, index); equal keys give equal sequences.
  Rng(std::uint64_t seed, std::uint64_t stream, std::uint64_t index = 0);

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform on the open interval (0, 1): (j + 1/2) 2^-53, j uniform in [0, 2^53). Never 0 or 1.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  /// Uniform integer in [0, n), n >= 1 (Lemire's multiply-shift; bias below 2^-64 n).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;  // GCC/Clang; __extension__ keeps -Wpedantic quiet
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }
  /// Standard normal (Box-Muller; the second value of each pair is kept for the next call).
  double normal();
  /// Gamma(shape, rate 1), shape > 0 (Marsaglia and Tsang 2000; shape < 1 by the U^(1/shape) boost),
  /// returned as its logarithm so that tiny shapes do not underflow.
  double log_gamma_variate(double shape);

  /// out[i] = uniform() for i < n.
  void fill_uniform(double* out, std::size_t n);
  /// out[i] = standard normal for i < n (vectorised Box-Muller on pairs of uniforms).
  void fill_normal(double* out, std::size_t n);
  /// out[i] ~ Gamma(shape, rate 1) for i < n: batched Marsaglia-Tsang for shape >= 1, exp(log_gamma_variate)
  /// below (a draw may underflow to 0 there for shape < ~0.02; use log_gamma_variate).
  void fill_gamma(double shape, double* out, std::size_t n);

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

/// splitmix64 finaliser: a bijective 64-bit mix (Steele, Lea and Flood 2014).
std::uint64_t mix64(std::uint64_t x);

/// Seed override for tests and probes: the value of environment variable `name` if set (a decimal
/// integer), else `fallback`. @throws InputError if the variable is set but is not an integer >= 0.
std::uint64_t seed_from_env(const char* name, std::uint64_t fallback);

}  // namespace ropekit
