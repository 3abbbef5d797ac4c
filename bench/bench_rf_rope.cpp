// RF-RoPE Monte Carlo core: throughput in angle evaluations per second (one cosine and one sine of
// the same angle u = Dp . w_i, the work of one block at one lag in one trial) against a plain scalar
// std::cos / std::sin loop over the same work in this binary.
//
// The scalar baseline is kept honest: it is compiled with tree vectorisation off for that function
// (GCC would not vectorise calls to cos without -ffast-math anyway, since glibc declares no SIMD
// variants otherwise), it runs on frequencies drawn before the clock starts (the core's time includes
// its own sampling and moment accumulation, so the ratio is if anything understated), and its result
// is accumulated and checked against the core's estimate so that nothing can be optimised away.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "ropekit/mc/monte_carlo.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/vecmath.hpp"

namespace ropekit::bench {

namespace {

// The plain scalar loop: for each trial and lag, S = sum_i A_i cos(t w_i) + B_i sin(t w_i).
__attribute__((noinline, optimize("no-tree-vectorize", "no-tree-slp-vectorize"))) double scalar_scores(
    const std::vector<double>& w, std::size_t D, const std::vector<double>& lags, const std::vector<double>& A,
    const std::vector<double>& B, std::size_t trials) {
  double total = 0;
  for (std::size_t n = 0; n < trials; ++n) {
    const double* wn = w.data() + n * D;
    for (double t : lags) {
      double s = 0;
      for (std::size_t i = 0; i < D; ++i) {
        const double u = t * wn[i];
        s += A[i] * std::cos(u) + B[i] * std::sin(u);
      }
      total += s;
    }
  }
  return total;
}

// Minimum wall time of f over `repeats` runs after one warm-up, in milliseconds: the least disturbed run,
// for per-path comparisons on a shared machine.
double min_ms(const std::function<void()>& f, int repeats) {
  f();
  double best = INFINITY;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

struct Workload {
  const char* name;
  const char* spectrum;
  int blocks;
  std::vector<double> lags;
  std::int64_t trials;
};

}  // namespace

void rf_rope_suite() {
  std::vector<double> scattered;  // 16 lags, not evenly spaced: one SLEEF sincos per (lag, block)
  for (int i = 0; i < 16; ++i) scattered.push_back(0.37 + 3.9 * i + 0.11 * (i % 3));
  std::vector<double> grid;  // 64 lags 0, 1, ..., 63: the angle-addition recurrence
  for (int i = 0; i < 64; ++i) grid.push_back(i);
  const std::vector<Workload> workloads = {
      {"16 scattered lags (one 8-lane sincos per lag and block)", "gaussian:sigma=2", 256, scattered, 8192},
      {"64 lags on a grid (angle addition)", "gaussian:sigma=2", 256, grid, 8192},
      {"16 scattered lags, Matern-1.5 (gamma draws dominate)", "matern:nu=1.5,l=3", 256, scattered, 8192},
  };
  fmt::print("SIMD path {} (register width {} doubles; ROPEKIT_SIMD=scalar|avx2|avx512 forces one), {} hardware threads. "
             "Work: trials x blocks x lags angle evaluations, each one cos and one sin of the same angle. Median of 7 runs "
             "after a warm-up.\n\n",
             simd_path_name(simd_path()), simd_width(), default_threads());
  fmt::print("| workload | angle evals | scalar std::cos/sin, 1 thread | core, 1 thread | core, 2 threads | ratio 1 thread | "
             "**ratio 2 threads** | check |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& wl : workloads) {
    const Spectrum s = parse_spectrum(wl.spectrum);
    const Coefficients c = coefficients(make_content(ContentKind::random, wl.blocks, kDefaultSeed));
    Eigen::MatrixXd lags = Eigen::Map<const Eigen::VectorXd>(wl.lags.data(), static_cast<Eigen::Index>(wl.lags.size()));
    const double evals = angle_evaluations(wl.trials, wl.blocks, lags.rows());

    McOptions o;
    o.trials = wl.trials;
    o.seed = kDefaultSeed;
    std::vector<Moments> core_result;
    o.threads = 1;
    const double core1 = median_ms([&] { core_result = score_moments(s, c, lags, o); }, 7);
    o.threads = 2;
    const double core2 = median_ms([&] { core_result = score_moments(s, c, lags, o); }, 7);

    // Baseline on its own draws of the same density, made before the clock starts.
    const auto D = static_cast<std::size_t>(wl.blocks);
    const auto N = static_cast<std::size_t>(wl.trials);
    std::vector<double> w(N * D);
    Rng rng(kDefaultSeed, 77);
    for (std::size_t n = 0; n < N; ++n) sample(s, rng, D, w.data() + n * D);
    const std::vector<double> A(c.A.data(), c.A.data() + D), B(c.B.data(), c.B.data() + D);
    double baseline_total = 0;
    const double scalar = median_ms([&] { baseline_total = scalar_scores(w, D, wl.lags, A, B, N); }, 7);

    // Both estimate sum over lags of (q . k) Phi: they must agree within a few standard errors.
    double core_total = 0, se2 = 0;
    for (const auto& m : core_result) {
      core_total += m.mean;
      se2 += m.variance() / m.n;
    }
    const double baseline_mean = baseline_total / static_cast<double>(N);
    const bool agree = std::abs(baseline_mean - core_total) <= 8 * std::sqrt(2 * se2 * static_cast<double>(lags.rows()));
    auto rate = [&](double ms) { return fmt::format("{:.3g}/s ({:.0f} ms)", evals / (ms * 1e-3), ms); };
    fmt::print("| {} ({}, D = {}, N = {}) | {:.3g} | {} | {} | {} | {:.1f}x | **{:.1f}x** | {} |\n", wl.name, wl.spectrum,
               wl.blocks, wl.trials, evals, rate(scalar), rate(core1), rate(core2), scalar / core1, scalar / core2,
               agree ? "same estimate" : "MISMATCH");
  }

  // The vectorised kernel alone (no sampling, no moments), on every SIMD path this CPU runs (forced as
  // ROPEKIT_SIMD would), against the scalar loop and against the path's own sincos throughput: the kernel
  // cannot beat a loop that does nothing but its sincos, so core / limit is how much the rest costs.
  {
    const std::size_t D = 256, reps = 20000;
    std::vector<double> w(D), A(D), B(D), u(D), sn(D), cs(D);
    Rng rng(kDefaultSeed, 78);
    for (std::size_t i = 0; i < D; ++i) {
      w[i] = 0.5 * rng.normal();
      A[i] = rng.normal();
      B[i] = rng.normal();
      u[i] = 17.3 * w[i];
    }
    const std::vector<double> lags(reps, 17.3);
    const double per_ns = 1e6 / static_cast<double>(D * reps);  // ms per run -> ns per angle
    double sink_scalar = 0;
    const double scalar = min_ms([&] { sink_scalar = scalar_scores(w, D, lags, A, B, 1); }, 9) * per_ns;
    // The Monte Carlo core end to end on one thread: sampling, scores, moments (16 scattered lags).
    const Spectrum spec = parse_spectrum("gaussian:sigma=2");
    const Coefficients coef = coefficients(make_content(ContentKind::random, 256, kDefaultSeed));
    const Eigen::MatrixXd mc_lags =
        Eigen::Map<const Eigen::VectorXd>(scattered.data(), static_cast<Eigen::Index>(scattered.size()));
    McOptions o;
    o.trials = 2048;
    o.seed = kDefaultSeed;
    o.threads = 1;
    const double mc_per_ns = 1e6 / angle_evaluations(o.trials, 256, mc_lags.rows());

    fmt::print("\nPer SIMD path, 1 thread, D = {} blocks x {} repeats (minimum of 9 runs after a warm-up; ns per angle, "
               "one cos and one sin). Scalar std::cos + std::sin loop: {:.2f} ns per angle. Goals: dot_cos_sin >= 5x the "
               "scalar loop on avx2, >= 8x on avx512. Limit: sincos_array_fast alone over the same angles. MC core: "
               "score_moments, gaussian:sigma=2, 16 scattered lags, N = {}, sampling and moments included.\n\n",
               D, reps, scalar, o.trials);
    fmt::print("| path | sincos alone (limit) | dot_cos_sin | **ratio to scalar** | goal | dot / limit | MC core | MC core "
               "ratio | checksum |\n|---|---|---|---|---|---|---|---|---|\n");
    const SimdPath chosen = simd_path();
    for (SimdPath path : supported_simd_paths()) {
      set_simd_path(path);
      double sink = 0;
      const double limit = min_ms([&] {
        for (std::size_t r = 0; r < reps; ++r) {
          sincos_array_fast(u.data(), sn.data(), cs.data(), D);
          sink += sn[r % D];
        }
      }, 9) * per_ns;
      const double core = min_ms([&] {
        double s = 0;
        for (double t : lags) s += dot_cos_sin(t, w.data(), A.data(), B.data(), D);
        sink = s;
      }, 9) * per_ns;
      const double mc = min_ms([&] { score_moments(spec, coef, mc_lags, o); }, 5) * mc_per_ns;
      const double goal = path == SimdPath::avx512 ? 8 : path == SimdPath::avx2 ? 5 : 0;  // the goals
      const double ratio = scalar / core;
      const std::string verdict = goal == 0 ? "—" : fmt::format(">= {:.0f}x: {}", goal, ratio >= goal ? "met" : "MISSED");
      fmt::print("| {}{} | {:.2f} ns | {:.2f} ns | **{:.1f}x** | {} | {:.2f} | {:.2f} ns | {:.1f}x | {:.12g} |\n",
                 simd_path_name(path), path == chosen ? " (default)" : "", limit, core, ratio, verdict, core / limit, mc,
                 scalar / mc, sink / static_cast<double>(reps));
    }
    set_simd_path(chosen);
    fmt::print("\nScalar loop checksum {:.12g} (the rows' checksums must agree with it to about 1e-12).\n",
               sink_scalar / static_cast<double>(reps));
  }
}

}  // namespace ropekit::bench
