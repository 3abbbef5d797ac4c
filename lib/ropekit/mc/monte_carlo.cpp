#include "ropekit/mc/monte_carlo.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <limits>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/vecmath.hpp"

namespace ropekit {

namespace {
constexpr std::uint64_t kStreamFrequencies = 0xF4E9'0E4C;  // the frequencies' stream of a seed

// True if evaluating a trial's scores on the near grid (lags moved by up to delta) changes no score by more
// than `limit`: delta sum_i |w_i| (|A_i| + |B_i|) <= limit. Exact grids (delta = 0) always fit.
bool grid_fits(double delta, const double* w, const double* ab, std::size_t D, double limit) {
  if (delta == 0) return true;
  double sum = 0;
  for (std::size_t i = 0; i < D; ++i) sum += std::fabs(w[i]) * ab[i];
  return delta * sum <= limit;
}
}  // namespace

void Moments::add(double x) {
  Moments one;
  one.n = 1;
  one.mean = x;
  merge(one);
}

void Moments::merge(const Moments& o) {
  if (o.n == 0) return;
  if (n == 0) {
    *this = o;
    return;
  }
  const double na = n, nb = o.n, N = na + nb;
  const double d = o.mean - mean, d2 = d * d;
  const double m2 = M2 + o.M2 + d2 * na * nb / N;
  const double m3 = M3 + o.M3 + d * d2 * na * nb * (na - nb) / (N * N) + 3 * d * (na * o.M2 - nb * M2) / N;
  const double m4 = M4 + o.M4 + d2 * d2 * na * nb * (na * na - na * nb + nb * nb) / (N * N * N) +
                    6 * d2 * (na * na * o.M2 + nb * nb * M2) / (N * N) + 4 * d * (na * o.M3 - nb * M3) / N;
  mean += d * nb / N;
  n = N;
  M2 = m2;
  M3 = m3;
  M4 = m4;
}

double Moments::sd() const { return std::sqrt(variance()); }

double Moments::stderr_mean() const { return n > 0 ? sd() / std::sqrt(n) : 0.0; }

double Moments::stderr_variance() const {
  if (n < 4) return std::numeric_limits<double>::infinity();
  const double s2 = variance();
  return std::sqrt(std::max(0.0, (M4 / n - s2 * s2 * (n - 3) / (n - 1)) / n));
}

void McOptions::validate(const Where& where) const {
  check_in_range(where, "trials", trials, 2, std::int64_t{1} << 40);
  // Negative counts were read as "all cores" (issue 20 item 14: ropekit.verify_master(threads=-1) ran).
  if (threads < 0) throw_bad_value(where, "threads", std::to_string(threads), "an integer >= 0 (0: all cores)");
}

Cost monte_carlo_cost(std::int64_t trials, double blocks, double lags, int k, int threads) {
  const double t = static_cast<double>(trials);
  const double chunks = std::ceil(t / static_cast<double>(kTrialsPerChunk));
  const double workers = std::min(std::min(chunks, 64.0), static_cast<double>(threads > 0 ? threads : default_threads()));
  const double moments = (std::min(chunks, 64.0) + 1) * lags * sizeof(Moments);
  const double per_worker = 8.0 * (2.5 * blocks * k + 2 * blocks + 14 * lags);
  const double angles = t * blocks * lags * (k > 1 ? 1.0 + 0.5 * k : 1.0);
  return Cost{moments + workers * per_worker + 8.0 * lags * k, angles / kAnglesPerSecond};
}

double angle_evaluations(std::int64_t trials, int blocks, Eigen::Index lags) {
  return static_cast<double>(trials) * blocks * static_cast<double>(lags);
}

namespace {
// The grid the angle-addition path runs on: 1-D lags, at least kMinGridLags of them, an even grid up to rounding.
std::optional<NearGrid> score_grid(const Eigen::MatrixXd& lags) {
  if (lags.cols() != 1 || static_cast<std::size_t>(lags.rows()) < kMinGridLags) return std::nullopt;
  return near_grid(std::span<const double>(lags.data(), static_cast<std::size_t>(lags.rows())));
}
}  // namespace

bool scores_as_grid(const Eigen::MatrixXd& lags) { return score_grid(lags).has_value(); }

std::vector<Moments> score_moments(const Spectrum& draw, const Coefficients& c, const Eigen::MatrixXd& lags,
                                   const McOptions& options) {
  options.validate();
  check_samplable(draw, "Monte Carlo: spectrum");
  const std::size_t k = static_cast<std::size_t>(dims(draw));
  if (static_cast<std::size_t>(lags.cols()) != k)
    throw_bad_value("Monte Carlo", "lag dimension", std::to_string(lags.cols()),
                    fmt::format("k = {}, the spectrum's dims", k));
  if (lags.rows() < 1) throw_bad_value("Monte Carlo", "lags", "none", "at least one lag");
  for (Eigen::Index i = 0; i < lags.size(); ++i) check_finite("Monte Carlo", "lag", lags.data()[i]);
  if (options.sampling == Sampling::stratified && k != 1)
    throw_bad_value("Monte Carlo", "sampling", "stratified", fmt::format("iid or antithetic for k = {} (stratified needs k = 1)", k));
  const std::size_t D = static_cast<std::size_t>(c.A.size());
  if (D < 1) throw_bad_value("Monte Carlo", "blocks", "0", "at least 1");

  const std::size_t L = static_cast<std::size_t>(lags.rows());
  const std::vector<double> t(lags.data(), lags.data() + (k == 1 ? L : 0));  // 1-D lags, contiguous
  // 1-D lags on an even grid up to rounding (decimal input) take the angle-addition path (lags/near_grid):
  // t[m] = t0 + s[m] + r[m] with s an exact grid from 0 and |r[m]| <= delta <= kNearGridUlps ulp(max|t|).
  // S(t0 + s) = sum_i A'_i cos(s w_i) + B'_i sin(s w_i) with the coefficients rotated by the anchor's phase,
  // A' = A cos(t0 w) + B sin(t0 w), B' = B cos(t0 w) - A sin(t0 w) (D sincos per trial), so the grid kernel
  // runs on s. Dropping r moves S by at most delta sum_i |w_i| (|A_i| + |B_i|) (the derivative in t is bounded
  // by that sum); rounding t0 w_i adds 1/2 ulp(t0) to delta. A trial takes the grid only if this bound is at most
  // kNearGridBudget = 32 eps sum_i (|A_i| + |B_i|): half the recurrence's own rounding (about 2 kAnchor = 64 eps
  // per unit of |A'| + |B'| <= sqrt(2) (|A| + |B|)), so the grid path stays within rf_verify's allowance of
  // 8 (D + 8) eps per unit of sum |A| + |B| for D >= 8. Other trials (heavy-tailed frequencies, large lags) use
  // the direct path. For 0.1,0.2,...,6.4: delta <= 1 ulp(6.4) = 4 eps, plus 1/2 ulp(0.1).
  const std::optional<NearGrid> near = score_grid(lags);
  const bool grid = near.has_value();
  const bool rotate = grid && near->t0 != 0;
  const double t0_ulp = rotate ? std::nextafter(std::fabs(near->t0), INFINITY) - std::fabs(near->t0) : 0.0;
  const double shift = grid ? near->delta + 0.5 * t0_ulp : 0.0;
  const double c_abs = c.A.cwiseAbs().sum() + c.B.cwiseAbs().sum();
  const double shift_limit = kNearGridBudget * std::numeric_limits<double>::epsilon() * c_abs;
  std::vector<double> AB(D);  // |A_i| + |B_i|
  for (std::size_t i = 0; i < D; ++i) {
    const auto j = static_cast<Eigen::Index>(i);
    AB[i] = std::fabs(c.A[j]) + std::fabs(c.B[j]);
  }
  const QuantileFunction Q = options.sampling == Sampling::stratified ? make_quantile(draw) : QuantileFunction();
  const std::vector<double> A(c.A.data(), c.A.data() + D), B(c.B.data(), c.B.data() + D);

  const auto N = options.trials;
  const std::size_t chunks = static_cast<std::size_t>((N + kTrialsPerChunk - 1) / kTrialsPerChunk);
  auto run_chunk = [&](std::size_t chunk, std::vector<Moments>& out) {
    Rng rng(options.seed, kStreamFrequencies, chunk);
    const std::int64_t first = static_cast<std::int64_t>(chunk) * kTrialsPerChunk;
    const std::int64_t count = std::min<std::int64_t>(kTrialsPerChunk, N - first);
    std::vector<double> w(D * k), half((D + 1) / 2 * k), u(D), S(L), scratch(grid ? 8 * L : 0);
    std::vector<double> A2(rotate ? D : 0), B2(rotate ? D : 0), sn(rotate ? D : 0), cs(rotate ? D : 0);
    std::vector<std::size_t> perm(D);
    std::vector<ShiftedSums> sums(L);
    for (std::int64_t trial = 0; trial < count; ++trial) {
      draw_frequencies(draw, options.sampling, Q, rng, D, w.data(), half, perm);
      if (grid && grid_fits(shift, w.data(), AB.data(), D, shift_limit)) {
        if (rotate) {
          for (std::size_t i = 0; i < D; ++i) u[i] = near->t0 * w[i];
          sincos_array(u.data(), sn.data(), cs.data(), D);
          for (std::size_t i = 0; i < D; ++i) {
            A2[i] = A[i] * cs[i] + B[i] * sn[i];
            B2[i] = B[i] * cs[i] - A[i] * sn[i];
          }
        }
        dot_cos_sin_grid(near->s.data(), L, w.data(), rotate ? A2.data() : A.data(), rotate ? B2.data() : B.data(), D,
                         S.data(), scratch.data());
      } else if (k == 1) {
        for (std::size_t l = 0; l < L; ++l) S[l] = dot_cos_sin(t[l], w.data(), A.data(), B.data(), D);
      } else {
        for (std::size_t l = 0; l < L; ++l) {
          for (std::size_t i = 0; i < D; ++i) u[i] = 0;
          for (std::size_t j = 0; j < k; ++j) {
            const double lj = lags(static_cast<Eigen::Index>(l), static_cast<Eigen::Index>(j));
            for (std::size_t i = 0; i < D; ++i) u[i] += lj * w[j * D + i];
          }
          S[l] = dot_cos_sin(u.data(), A.data(), B.data(), D);
        }
      }
      for (std::size_t l = 0; l < L; ++l) sums[l].add(S[l]);
    }
    out.resize(L);
    for (std::size_t l = 0; l < L; ++l) {
      if (!sums[l].finite())
        throw InputError(fmt::format("Monte Carlo: a score is not finite at lag {} (lag * frequency overflows float64; "
                                     "use smaller lags or a lighter-tailed spectrum than {})",
                                     format_number(lags(static_cast<Eigen::Index>(l), 0)), spelling(draw)));
      out[l] = sums[l].moments();
    }
  };
  return merge_chunks(chunks, L, options.threads, run_chunk, options.progress);
}

Moments ShiftedSums::moments() const {
  const double m1 = s1 / n;
  Moments m;
  m.n = n;
  m.mean = shift + m1;
  m.M2 = std::max(0.0, s2 - n * m1 * m1);
  m.M3 = s3 - 3 * m1 * s2 + 2 * n * m1 * m1 * m1;
  m.M4 = std::max(0.0, s4 - 4 * m1 * s3 + 6 * m1 * m1 * s2 - 3 * n * m1 * m1 * m1 * m1);
  return m;
}

std::vector<Moments> merge_chunks(std::size_t chunks, std::size_t lags, int threads,
                                  const std::function<void(std::size_t, std::vector<Moments>&)>& chunk,
                                  const std::function<void(double)>& progress) {
  constexpr std::size_t kBatch = 64;
  std::vector<std::vector<Moments>> chunk_moments(std::min(chunks, kBatch));
  std::vector<Moments> total(lags);
  std::atomic<std::size_t> done{0};
  std::mutex progress_mutex;
  for (std::size_t first = 0; first < chunks; first += kBatch) {
    const std::size_t count = std::min(kBatch, chunks - first);
    parallel_for(count, threads, [&](std::size_t i) {
      chunk(first + i, chunk_moments[i]);
      const std::size_t finished = ++done;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress(static_cast<double>(finished) / static_cast<double>(chunks));
      }
    });
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t l = 0; l < lags; ++l) total[l].merge(chunk_moments[i][l]);
  }
  return total;
}

}  // namespace ropekit
