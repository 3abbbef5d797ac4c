#include "ropekit/encodings/rotary_spectrum.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/echo.hpp"
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
  const auto far = blocks_at(e, kFar, seq_len, cache);
  if (far.size() != one.size()) return std::nullopt;
  for (std::size_t i = 0; i < one.size(); ++i) {
    if (i % 65536 == 0) check_cancelled();
    const Block &x = one[i], &y = far[i];
    // The phase at lag L is -theta L computed as one product: the same double as (-theta) * L here.
    if (x.rotary != y.rotary || x.c != y.c || x.repeat != y.repeat || y.phase != x.phase * kFar) return std::nullopt;
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

void spectrum_traces(const RotarySpectrum& s, const double* lags, std::size_t n, double* out, double* square,
                     bool use_grid) {
  const std::size_t m = s.theta.size();
  // tr G^2 = c_sq + sum b cos 2x = c_sq - sum b + sum 2b cos^2 x: both sums from one cosine per term.
  std::vector<double> twice_b(m);
  for (std::size_t i = 0; i < m; ++i) twice_b[i] = 2 * s.b[i];
  const double sum_b = std::accumulate(s.b.begin(), s.b.end(), 0.0);
  double theta_max = 0;
  for (const double th : s.theta) theta_max = std::max(theta_max, std::abs(th));
  // Chunks of lags small enough that the grid kernel's scratch (16 doubles a lag) stays in cache, and of pairs so
  // that Ctrl-C is seen within a chunk of a huge encoding; each lag chunk on the grid kernel if it is an exact even
  // grid itself, else lag by lag.
  constexpr std::size_t kChunk = 2048, kPairs = 16384;
  std::vector<double> scratch(16 * kChunk), part_a(kChunk), part_b(kChunk), sq(kChunk);
  for (std::size_t j0 = 0; j0 < n; j0 += kChunk) {
    if (j0 % (16 * kChunk) == 0) check_cancelled();
    const std::size_t c = std::min(kChunk, n - j0);
    const double* t = lags + j0;
    double t_max = 0;
    for (std::size_t j = 0; j < c; ++j) t_max = std::max(t_max, std::abs(t[j]));
    if (!(theta_max * t_max <= 1e14)) {
      traces_far(s, t, c, out + j0, square ? square + j0 : nullptr);
      continue;
    }
    const bool grid = use_grid && c >= 2 && is_even_grid(t, c);
    std::fill(out + j0, out + j0 + c, s.c_tr);
    std::fill(sq.begin(), sq.begin() + static_cast<std::ptrdiff_t>(c), s.c_sq - sum_b);
    for (std::size_t i0 = 0; i0 < m; i0 += kPairs) {
      check_cancelled();
      const std::size_t k = std::min(kPairs, m - i0);
      const double *w = s.theta.data() + i0, *a = s.a.data() + i0, *b = twice_b.data() + i0;
      if (grid) {
        cos_sums_grid(t, c, w, a, b, k, part_a.data(), part_b.data(), scratch.data());
      } else {
        cos_sums(t, c, w, a, b, k, part_a.data(), part_b.data());
      }
      for (std::size_t j = 0; j < c; ++j) {
        out[j0 + j] += part_a[j];
        sq[j] += part_b[j];
      }
    }
    if (square) std::copy(sq.begin(), sq.begin() + static_cast<std::ptrdiff_t>(c), square + j0);
  }
}

bool rotary_kernel(const Encoding& e, const double* lags, std::size_t n, double rho, std::optional<double> seq_len,
                   double* kernel, double* mean, double* variance, bool grid) {
  const auto s = rotary_spectrum(e, seq_len);
  if (!s) return false;
  for (std::size_t j = 0; j < n; ++j)
    if (!std::isfinite(lags[j])) throw InputError(fmt::format("lag = {} (must be finite)", format_number(lags[j])));
  constexpr std::size_t kBlock = 65536;  // working arrays of a block of lags, whatever n is
  std::vector<double> tr(std::min(n, kBlock)), sq(tr.size());
  const double tr0 = s->trace_at_zero();
  grid = grid && n >= 2 && is_even_grid(lags, n);  // the whole request, so that each chunk is one too
  for (std::size_t j0 = 0; j0 < n; j0 += kBlock) {
    const std::size_t c = std::min(kBlock, n - j0);
    spectrum_traces(*s, lags + j0, c, tr.data(), sq.data(), grid);
    for (std::size_t j = 0; j < c; ++j) {
      if (kernel) kernel[j0 + j] = tr[j] / tr0;
      if (mean) mean[j0 + j] = rho * tr[j];
      if (variance) variance[j0 + j] = s->fro + rho * rho * sq[j];
    }
  }
  return true;
}

}  // namespace ropekit
