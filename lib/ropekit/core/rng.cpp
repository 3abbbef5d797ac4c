#include "ropekit/core/rng.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/core/vecmath.hpp"

namespace ropekit {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

Rng::Rng(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  // Key -> 64 bits by chained mixing (distinct keys collide with probability ~2^-64), then the
  // splitmix64 sequence from that key fills the state, as the xoshiro authors recommend.
  std::uint64_t x = mix64(mix64(mix64(seed) ^ stream) + index);
  for (auto& s : s_) {
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    s = z ^ (z >> 31);
  }
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double r = std::sqrt(-2.0 * std::log(uniform()));
  const double phase = 2.0 * M_PI * uniform();
  spare_ = r * std::sin(phase);
  has_spare_ = true;
  return r * std::cos(phase);
}

void Rng::fill_gamma(double shape, double* out, std::size_t n) {
  if (shape < 1) {  // G(a) = G(a + 1) U^(1/a), in logs (see log_gamma_variate)
    for (std::size_t i = 0; i < n; ++i) out[i] = std::exp(log_gamma_variate(shape));
    return;
  }
  // Marsaglia-Tsang with normals and uniforms drawn in vectorised batches, and the squeeze
  // u < 1 - 0.0331 x^4 that accepts most candidates without a logarithm.
  constexpr std::size_t kBatch = 256;
  double x[kBatch], u[kBatch];
  std::size_t used = kBatch;
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (std::size_t i = 0; i < n;) {
    if (used == kBatch) {
      fill_normal(x, kBatch);
      fill_uniform(u, kBatch);
      used = 0;
    }
    const double xi = x[used], ui = u[used];
    ++used;
    double v = 1.0 + c * xi;
    if (v <= 0) continue;
    v = v * v * v;
    const double x2 = xi * xi;
    if (ui < 1 - 0.0331 * x2 * x2 || std::log(ui) < 0.5 * x2 + d * (1 - v + std::log(v))) out[i++] = d * v;
  }
}

double Rng::log_gamma_variate(double shape) {
  if (shape < 1) {
    // G(a) = G(a + 1) U^(1/a): in logs, so that U^(1/a) for tiny a cannot underflow to 0.
    return log_gamma_variate(shape + 1) + std::log(uniform()) / shape;
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return std::log(d * v);
  }
}

void Rng::fill_uniform(double* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = uniform();
}

void Rng::fill_normal(double* out, std::size_t n) {
  // Pieces of 256 pairs: u1 -> r = sqrt(-2 ln u1), u2 -> (sin, cos)(2 pi u2). The phase 2 pi u2 is
  // rounded once (relative 1e-16), which no test of normality could see.
  constexpr std::size_t kPiece = 256;
  double u1[kPiece], u2[kPiece], s[kPiece], c[kPiece];
  std::size_t done = 0;
  while (done < n) {
    const std::size_t pairs = std::min(kPiece, (n - done + 1) / 2);
    for (std::size_t i = 0; i < pairs; ++i) {
      u1[i] = uniform();
      u2[i] = 2 * M_PI * uniform();
    }
    log_array(u1, u1, pairs);
    sincos_array_fast(u2, s, c, pairs);
    for (std::size_t i = 0; i < pairs; ++i) {
      const double r = std::sqrt(-2.0 * u1[i]);
      out[done++] = r * c[i];
      if (done < n) out[done++] = r * s[i];
    }
  }
}

std::uint64_t seed_from_env(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  const auto i = parse_int(v);
  if (!i || *i < 0) throw_bad_value("environment", name, std::string("'") + v + "'", "an integer >= 0");
  return static_cast<std::uint64_t>(*i);
}

}  // namespace ropekit
