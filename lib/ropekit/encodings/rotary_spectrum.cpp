#include "ropekit/encodings/rotary_spectrum.hpp"

#include <algorithm>
#include <numeric>

#include "ropekit/core/cancel.hpp"

#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit {

namespace {

// True when some schedule of the encoding is evaluated at the length a causal model has seen at each lag.
bool any_per_lag(const Encoding& e, std::optional<double> seq_len) {
  if (const auto* d = std::get_if<enc::DirectSum>(&e.value)) {
    for (const auto& p : d->parts)
      if (any_per_lag(p, seq_len)) return true;
    return false;
  }
  const FrequencySchedule* s = schedule_of(e);
  return s && !seq_len &&
         (std::holds_alternative<scaling::Dynamic>(s->scaling) || std::holds_alternative<scaling::LongRope>(s->scaling));
}

std::vector<Block> blocks_at(const Encoding& e, double lag, std::optional<double> seq_len, FrequencyCache& cache) {
  std::vector<Block> out;
  BlockContext ctx{out, lag, seq_len, cache};
  append_blocks(e, ctx);
  return out;
}

}  // namespace

double RotarySpectrum::trace_at_zero() const { return std::accumulate(a.begin(), a.end(), c_tr); }

std::optional<RotarySpectrum> rotary_spectrum(const Encoding& e, std::optional<double> seq_len) {
  if (lag_dims(e) != 1 || !is_relative(e) || std::holds_alternative<enc::Nd>(e.value) ||
      std::holds_alternative<enc::RfRope>(e.value) || any_per_lag(e, seq_len))
    return std::nullopt;
  FrequencyCache cache;
  const auto one = blocks_at(e, 1, seq_len, cache);
  constexpr double kFar = 1048579;  // 2^20 + 3
  for (const double lag : {kFar}) {
    const auto other = blocks_at(e, lag, seq_len, cache);
    if (other.size() != one.size()) return std::nullopt;
    for (std::size_t i = 0; i < one.size(); ++i) {
      if (i % 65536 == 0) check_cancelled();
      const Block &x = one[i], &y = other[i];
      // The phase at lag L is -theta L computed as one product: the same double as theta * L here.
      if (x.rotary != y.rotary || x.c != y.c || x.repeat != y.repeat || y.phase != x.phase * lag)
        return std::nullopt;
    }
  }
  RotarySpectrum s;
  for (const Block& b : one) {
    s.fro += frobenius_squared(b);
    if (!b.rotary) {
      s.c_tr += trace(b);
      s.c_sq += trace_of_square(b);
      continue;
    }
    const double m = b.order(), c0 = b.c[0], copies = b.repeat;
    s.theta.push_back(-b.phase);
    s.a.push_back(2 * m * c0 * copies);
    s.b.push_back(2 * m * c0 * c0 * copies);
  }
  return s;
}

namespace {

// Lag by lag in scalar libm, for lags whose phases pass SLEEF's accurate range (|theta t| > 1e14): glibc's cos reduces
// any double exactly; cos 2x as 2 cos^2 x - 1 (2 theta t overflows first).
void traces_far(const RotarySpectrum& s, const double* t, std::size_t n, double* out, double* square) {
  for (std::size_t j = 0; j < n; ++j) {
    double tr = s.c_tr, sq = s.c_sq;
    for (std::size_t i = 0; i < s.theta.size(); ++i) {
      const double c = std::cos(s.theta[i] * t[j]);
      tr += s.a[i] * c;
      sq += s.b[i] * (2 * c * c - 1);
    }
    out[j] = tr;
    if (square) square[j] = sq;
  }
}

}  // namespace

void spectrum_traces(const RotarySpectrum& s, const double* lags, std::size_t n, double* out, double* square) {
  const std::size_t m = s.theta.size();
  std::vector<double> twice(m);
  for (std::size_t i = 0; i < m; ++i) twice[i] = 2 * s.theta[i];  // exact
  double theta_max = 0;
  for (const double th : s.theta) theta_max = std::max(theta_max, std::abs(th));
  // Chunks of lags small enough that the grid kernel's scratch (8 doubles a lag) stays in cache, and of pairs so
  // that Ctrl-C is seen within a chunk of a huge encoding; each lag chunk on the grid kernel if it is an exact even
  // grid itself, else lag by lag.
  constexpr std::size_t kChunk = 4096, kPairs = 16384;
  std::vector<double> scratch(8 * kChunk), part(kChunk);
  const std::vector<double> zero(std::min(m, kPairs), 0.0);
  auto sums = [&](const std::vector<double>& w, const std::vector<double>& weight, double constant, const double* t,
                  std::size_t c, double* into) {
    std::fill(into, into + c, constant);
    const bool grid = c >= 2 && is_even_grid(t, c);
    for (std::size_t i0 = 0; i0 < m; i0 += kPairs) {
      check_cancelled();
      const std::size_t k = std::min(kPairs, m - i0);
      if (grid) {
        dot_cos_sin_grid(t, c, w.data() + i0, weight.data() + i0, zero.data(), k, part.data(), scratch.data());
      } else {
        for (std::size_t j = 0; j < c; ++j) part[j] = dot_cos_sin(t[j], w.data() + i0, weight.data() + i0, zero.data(), k);
      }
      for (std::size_t j = 0; j < c; ++j) into[j] += part[j];
    }
  };
  for (std::size_t j0 = 0; j0 < n; j0 += kChunk) {
    if (j0 % (16 * kChunk) == 0) check_cancelled();
    const std::size_t c = std::min(kChunk, n - j0);
    const double* t = lags + j0;
    double t_max = 0;
    for (std::size_t j = 0; j < c; ++j) t_max = std::max(t_max, std::abs(t[j]));
    if (!(2 * theta_max * t_max <= 1e14)) {
      traces_far(s, t, c, out + j0, square ? square + j0 : nullptr);
      continue;
    }
    sums(s.theta, s.a, s.c_tr, t, c, out + j0);
    if (square) sums(twice, s.b, s.c_sq, t, c, square + j0);
  }
}

}  // namespace ropekit
