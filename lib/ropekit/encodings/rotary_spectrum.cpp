#include "ropekit/encodings/rotary_spectrum.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "ropekit/encoding.hpp"
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

void spectrum_traces(const RotarySpectrum& s, const double* lags, std::size_t n, double* out, double* square,
                     bool use_grid) {
  // tr G^2 = c_sq + sum b cos 2x = c_sq - sum b + sum 2b cos^2 x: both sums from one cosine per term.
  std::vector<double> twice_b(s.b.size());
  for (std::size_t i = 0; i < s.b.size(); ++i) twice_b[i] = 2 * s.b[i];
  const double sum_b = std::accumulate(s.b.begin(), s.b.end(), 0.0);
  std::fill(out, out + n, s.c_tr);
  if (square) std::fill(square, square + n, s.c_sq - sum_b);
  const bool grid = use_grid && n >= 2 && is_even_grid(lags, n);
  add_trig_sums(TrigSum::cos, lags, n, s.theta.data(), s.a.data(), square ? twice_b.data() : nullptr, s.theta.size(),
                out, square, grid);
}

namespace {

// A lag's blocks with the rotary ones of cached tables kept as groups (BlockContext::groups), the storage reused
// from lag to lag.
struct GroupedBlocks {
  std::vector<Block> rest;
  std::vector<RotaryGroup> groups;
  std::size_t used = 0;
  void at(const Encoding& e, double lag, std::optional<double> seq_len, FrequencyCache& cache) {
    rest.clear();
    used = 0;
    BlockContext ctx{rest, lag, seq_len, cache, &groups, &used};
    append_blocks(e, ctx);
  }
};

struct Traces {
  double tr = 0, fro = 0, sq = 0;
};

// The traces of one lag: the ungrouped blocks' own, and per group of F frequencies with coefficients c (order m),
// from S = sum_i cos(theta_i Dp) and Q = sum_i cos^2(theta_i Dp) (block.cpp's per-block forms summed over i):
// tr = 2 m c_0 S, ||.||_F^2 = 2 F sum_p (m - p) c_p^2, tr(.^2) = 2 m c_0^2 sum_i cos(2 theta_i Dp) = 2 m c_0^2 (2 Q - F).
Traces lag_traces(const GroupedBlocks& b, const double* S, const double* Q) {
  Traces t;
  for (const Block& x : b.rest) {
    t.tr += trace(x);
    t.fro += frobenius_squared(x);
    t.sq += trace_of_square(x);
  }
  for (std::size_t g = 0; g < b.used; ++g) {
    const std::vector<double>& c = b.groups[g].c;
    const double m = static_cast<double>(c.size()), F = static_cast<double>(b.groups[g].table->theta.rows());
    double chain = 0;
    for (std::size_t p = 0; p < c.size(); ++p) chain += (m - static_cast<double>(p)) * c[p] * c[p];
    t.tr += 2 * m * c[0] * S[g];
    t.fro += 2 * F * chain;
    t.sq += 2 * m * c[0] * c[0] * (2 * Q[g] - F);
  }
  return t;
}

// Encodings whose rotary blocks come in groups of a fixed frequency table with coefficients that move with the lag
// (jordan, damped, jordan-scaled, and direct sums with them; rope with a per-lag-free scheme takes rotary_kernel's
// faster route first): each group's cosine sums S, Q for a block of lags at once through the vector kernels, then
// per lag the family's coefficients (append_blocks with the groups kept whole: no block per frequency) and the
// closed forms of lag_traces. False (nothing written) where the encoding has no such group.
bool grouped_kernel(const Encoding& e, const double* lags, std::size_t n, double rho, std::optional<double> seq_len,
                    double* kernel, double* mean, double* variance, bool grid) {
  if (lag_dims(e) != 1 || !is_relative(e) || std::holds_alternative<enc::Nd>(e.value) ||
      std::holds_alternative<enc::RfRope>(e.value))
    return false;
  FrequencyCache cache;
  GroupedBlocks one, far, cur;
  one.at(e, 1, seq_len, cache);
  far.at(e, 1048579, seq_len, cache);
  if (one.used == 0 || one.used != far.used) return false;
  const std::size_t G = one.used;
  for (std::size_t g = 0; g < G; ++g)
    if (one.groups[g].table != far.groups[g].table) return false;
  std::vector<std::vector<double>> theta(G), ones(G);
  for (std::size_t g = 0; g < G; ++g) {
    const Eigen::MatrixXd& th = one.groups[g].table->theta;
    theta[g].assign(th.data(), th.data() + th.rows());
    ones[g].assign(theta[g].size(), 1.0);
  }
  cur.at(e, 0, seq_len, cache);
  std::vector<double> S0(G), Q0(G);
  for (std::size_t g = 0; g < G; ++g) S0[g] = Q0[g] = static_cast<double>(theta[g].size());
  const double tr0 = lag_traces(cur, S0.data(), Q0.data()).tr;
  grid = grid && n >= 2 && is_even_grid(lags, n);
  // Blocks of lags long enough that a grid's tables (remade per add_trig_sums call) are a small part of the work.
  constexpr std::size_t kBlock = 65536;
  std::vector<double> S(G * kBlock), Q(G * kBlock), s_j(G), q_j(G);
  for (std::size_t j0 = 0; j0 < n; j0 += kBlock) {
    const std::size_t c = std::min(kBlock, n - j0);
    std::fill(S.begin(), S.end(), 0.0);
    std::fill(Q.begin(), Q.end(), 0.0);
    for (std::size_t g = 0; g < G; ++g)
      add_trig_sums(TrigSum::cos, lags + j0, c, theta[g].data(), ones[g].data(), variance ? ones[g].data() : nullptr,
                    theta[g].size(), S.data() + g * kBlock, variance ? Q.data() + g * kBlock : nullptr, grid);
    for (std::size_t j = 0; j < c; ++j) {
      if (j % 256 == 0) check_cancelled();
      const double lag = lags[j0 + j];
      cur.at(e, lag, seq_len, cache);
      // The groups are the probes' at every lag: the same cached tables in the same order (a per-lag scheme's
      // table is not cached, so its blocks come as ungrouped ones).
      if (cur.used != G) throw std::logic_error("grouped_kernel: the rotary groups changed with the lag");
      for (std::size_t g = 0; g < G; ++g) s_j[g] = S[g * kBlock + j], q_j[g] = Q[g * kBlock + j];
      const Traces t = lag_traces(cur, s_j.data(), q_j.data());
      if (kernel) kernel[j0 + j] = t.tr / tr0;
      if (mean) mean[j0 + j] = rho * t.tr;
      if (variance) variance[j0 + j] = t.fro + rho * rho * t.sq;
    }
  }
  return true;
}

}  // namespace

bool rotary_kernel(const Encoding& e, const double* lags, std::size_t n, double rho, std::optional<double> seq_len,
                   double* kernel, double* mean, double* variance, bool grid) {
  for (std::size_t j = 0; j < n; ++j)
    if (!std::isfinite(lags[j])) throw InputError(fmt::format("lag = {} (must be finite)", format_number(lags[j])));
  const auto s = rotary_spectrum(e, seq_len);
  if (!s) return grouped_kernel(e, lags, n, rho, seq_len, kernel, mean, variance, grid);
  // The kernel (c_tr + sum a cos) / tr G(0) as c_tr / tr0 + sum (a / tr0) cos, the mean rho tr = (rho tr0) kernel
  // (rho c_tr + sum rho a cos without a kernel), the variance fro + rho^2 (c_sq - sum b) + sum 2 rho^2 b cos^2: each
  // output filled with its constant, then the sums added into it.
  const double tr0 = s->trace_at_zero(), sum_b = std::accumulate(s->b.begin(), s->b.end(), 0.0);
  const std::size_t m = s->theta.size();
  std::vector<double> wa(m), wb(variance ? m : 0), held;
  for (std::size_t i = 0; i < m; ++i) wa[i] = kernel ? s->a[i] / tr0 : rho * s->a[i];
  for (std::size_t i = 0; i < wb.size(); ++i) wb[i] = 2 * rho * rho * s->b[i];
  double* first = kernel ? kernel : mean;
  if (!first) {
    held.resize(n);
    first = held.data();
  }
  std::fill(first, first + n, kernel ? s->c_tr / tr0 : rho * s->c_tr);
  if (variance) std::fill(variance, variance + n, s->fro + rho * rho * (s->c_sq - sum_b));
  grid = grid && n >= 2 && is_even_grid(lags, n);
  add_trig_sums(TrigSum::cos, lags, n, s->theta.data(), wa.data(), variance ? wb.data() : nullptr, m, first, variance,
                grid);
  if (kernel && mean)
    for (std::size_t j = 0; j < n; ++j) mean[j] = rho * tr0 * kernel[j];
  return true;
}

}  // namespace ropekit
