#include "ropekit/lie/lie_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <mutex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/core/enum_text.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/keep_max.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/lie/lie_detail.hpp"

namespace ropekit {

using namespace lie_detail;

namespace {
// The pairwise reversibility scan costs (P^2 / 2) n^2 flops for P positions; keep it under ~2^28.
constexpr double kPairwiseFlops = 1 << 28;
}  // namespace

void LieCheckOptions::validate(const Where& where) const {
  check_in_range(where, "window", window, 2, 1 << 24);
  check_in_range(where, "pairs", pairs, 1, 1 << 20);
  check_in_range(where, "max_exp", max_exp, 1, std::int64_t{1} << 40);
  check_in_range(where, "max_differences", max_differences, 1, std::int64_t{1} << 40);
}

namespace {

using Point = std::vector<int>;

Eigen::VectorXd to_vector(const Point& p) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(p.size()));
  for (std::size_t i = 0; i < p.size(); ++i) v[static_cast<Eigen::Index>(i)] = p[i];
  return v;
}

// Calls f(d) for every d in [-r, r]^N whose first nonzero coordinate is positive (one of each +-d pair).
template <class F>
void for_each_half_difference(int N, int r, F&& f) {
  Point d(N, -r);
  while (true) {
    auto first = std::find_if(d.begin(), d.end(), [](int v) { return v != 0; });
    if (first != d.end() && *first > 0) f(d);
    int k = N - 1;
    while (k >= 0 && d[k] == r) d[k--] = -r;
    if (k < 0) return;
    ++d[k];
  }
}

double half_cube_count(int N, int r) { return (std::pow(2.0 * r + 1.0, N) - 1.0) / 2.0; }

struct Scan {
  double min = std::numeric_limits<double>::infinity();
  Point x, y;
  std::int64_t checked = 0;
  bool exhaustive = false;
  std::string method;
};

// Reversibility through relativity: |R(x) - R(y)|_F = |I - R(y - x)|_F, one evaluation per difference.
Scan scan_differences(const Encoder& enc, Route route, int W, std::int64_t budget, std::uint64_t seed,
                      const std::function<void()>& tick) {
  const int N = enc.axes(), n = enc.dim();
  const bool closed = route == Route::closed_form;
  Scan s;
  auto visit = [&](const Point& d) {
    double dist;
    const Eigen::VectorXd dv = to_vector(d);
    if (closed) {
      // |I - R(phi)|_F^2 = 4 (1 - cos phi) = 8 sin^2(phi / 2) per plane, without cancellation.
      const Eigen::VectorXd phase = enc.frequencies()->transpose() * dv;
      dist = std::sqrt(8.0 * (0.5 * phase.array()).sin().square().sum());
    } else {
      dist = (Eigen::MatrixXd::Identity(n, n) - enc(dv, route)).norm();
    }
    ++s.checked;
    tick();
    if (dist < s.min) {
      s.min = dist;
      s.x.assign(N, 0);
      s.y.assign(N, 0);
      for (int i = 0; i < N; ++i) s.x[i] = std::max(0, -d[i]), s.y[i] = s.x[i] + d[i];
    }
  };
  const std::string how = closed ? "closed form" : "matrix exponential";
  if (half_cube_count(N, W - 1) <= static_cast<double>(budget)) {
    for_each_half_difference(N, W - 1, visit);
    s.exhaustive = true;
    s.method = fmt::format("every difference y - x in the window, |I - R(y - x)|_F ({})", how);
    return s;
  }
  // Too many: every difference with |d|_inf <= r0 (half the budget), then seeded random differences.
  int r0 = 0;
  while (r0 + 1 < W && half_cube_count(N, r0 + 1) <= budget / 2.0) ++r0;
  if (r0 > 0) for_each_half_difference(N, r0, visit);
  Rng rng(seed, 0);
  while (s.checked < budget) {
    Point d(N);
    for (int i = 0; i < N; ++i) d[i] = static_cast<int>(rng.below(2 * W - 1)) - (W - 1);
    auto first = std::find_if(d.begin(), d.end(), [](int v) { return v != 0; });
    if (first == d.end()) continue;
    if (*first < 0)
      for (auto& v : d) v = -v;
    visit(d);
  }
  s.method = fmt::format("differences with |y - x|_inf <= {} and {} seeded random ones, |I - R(y - x)|_F ({}); sampled",
                         r0, s.checked - static_cast<std::int64_t>(r0 > 0 ? half_cube_count(N, r0) : 0), how);
  return s;
}

// Reversibility without relativity: R at distinct positions, every pair compared directly.
Scan scan_pairwise(const Encoder& enc, Route route, int W, std::int64_t max_exp, std::uint64_t seed,
                   const std::function<void()>& tick) {
  const int N = enc.axes(), n = enc.dim();
  const double all = std::pow(static_cast<double>(W), N);
  const double cap = std::min<double>(static_cast<double>(max_exp), std::max(2.0, std::sqrt(2.0 * kPairwiseFlops) / n));
  std::vector<Point> pos;
  Scan s;
  if (all <= cap) {
    Point p(N, 0);
    while (true) {
      pos.push_back(p);
      int k = N - 1;
      while (k >= 0 && p[k] == W - 1) p[k--] = 0;
      if (k < 0) break;
      ++p[k];
    }
    s.exhaustive = true;
  } else {
    std::set<Point> seen;
    const auto count = static_cast<std::size_t>(cap);
    if (N < 30 && (std::size_t{1} << N) <= count / 2)  // the corners of the window first
      for (std::size_t mask = 0; mask < (std::size_t{1} << N); ++mask) {
        Point p(N);
        for (int i = 0; i < N; ++i) p[i] = (mask >> i) & 1 ? W - 1 : 0;
        if (seen.insert(p).second) pos.push_back(p);
      }
    Rng rng(seed, 0);
    while (pos.size() < count) {
      Point p(N);
      for (int i = 0; i < N; ++i) p[i] = static_cast<int>(rng.below(W));
      if (seen.insert(p).second) pos.push_back(p);
    }
  }
  std::vector<Eigen::MatrixXd> R(pos.size());
  parallel_for(pos.size(), 0, [&](std::size_t a) {
    R[a] = enc(to_vector(pos[a]), route);
    tick();
  });
  // Row a's closest later position; rows reduced in order, so ties resolve the same on any thread count.
  std::vector<std::pair<double, std::size_t>> row_min(pos.size(), {std::numeric_limits<double>::infinity(), 0});
  parallel_for(pos.size(), 0, [&](std::size_t a) {
    for (std::size_t b = a + 1; b < pos.size(); ++b)
      if (const double dist = (R[a] - R[b]).norm(); dist < row_min[a].first || std::isnan(dist)) row_min[a] = {dist, b};
  });
  for (std::size_t a = 0; a < pos.size(); ++a) {
    s.checked += static_cast<std::int64_t>(pos.size() - a - 1);
    if (row_min[a].first < s.min || std::isnan(row_min[a].first))
      s.min = row_min[a].first, s.x = pos[a], s.y = pos[row_min[a].second];
  }
  s.method = s.exhaustive ? fmt::format("every pair of the {} window positions, |R(x) - R(y)|_F", pos.size())
                          : fmt::format("every pair of {} positions (window corners and seeded random ones) of the {} "
                                        "in the window, |R(x) - R(y)|_F; sampled",
                                        pos.size(), format_number(all));
  (void)n;
  return s;
}

}  // namespace

namespace {

constexpr double kPairwiseCap = 1 << 28;  // see scan_pairwise

// Positions the pairwise scan compares, as scan_pairwise chooses them.
double pairwise_positions(int n, int N, int W, std::int64_t max_exp) {
  const double cap = std::min<double>(static_cast<double>(max_exp), std::max(2.0, std::sqrt(2.0 * kPairwiseCap) / n));
  return std::min(std::pow(static_cast<double>(W), N), std::floor(cap));
}

// Flops of the pieces of check(): one R(x), the fixed part, and the reversibility scan.
struct LieWork {
  double per_r = 0, fixed = 0, relativity = 0, scan = 0;
  double total() const { return fixed + relativity + scan; }
};

LieWork lie_work(const GeneratorSet& set, const LieCheckOptions& o, bool closed, bool commuting) {
  const double n = set.dim, N = set.axes(), n3 = n * n * n, W = o.window;
  LieWork w;
  if (closed) {
    w.per_r = set.mixing ? 4 * n3 : n * n;  // Q E Q^T, or filling E
  } else {
    // Scaling and squaring: about 10 products for the Pade approximant, one per squaring; the norm of
    // (W - 1) sum_i B_i bounds the squarings (|.|_F >= |.|_2: an overestimate).
    double f = 0;
    for (const auto& t : set.base) f += t.stableNorm();
    if (set.mixing) f *= std::max(1.0, set.mixing->stableNorm() * set.mixing->stableNorm() / n);
    const double squarings = std::max(0.0, std::ceil(std::log2(std::max(1.0, (W - 1) * f / 5.4))));
    w.per_r = 2 * n3 * (10 + std::min(squarings, 2000.0));
  }
  // Acting generators, commutators, spectral norms, the rank SVD, Q's checks.
  w.fixed = (set.mixing ? N * 4 * n3 + 3 * n3 : 0) + 2 * N * (N - 1) * n3 + N * 4 * n3 + 4 * n * n * N * N;
  w.relativity = o.pairs * (3 * w.per_r + 2 * n3 + n * n);
  if (commuting) {
    const double all = (std::pow(2.0 * W - 1, N) - 1) / 2;
    const double count = std::min(all, static_cast<double>(closed ? o.max_differences : o.max_exp));
    w.scan = count * (closed ? 10 * N * n : w.per_r + n * n);
  } else {
    const double P = pairwise_positions(set.dim, set.axes(), o.window, o.max_exp);
    w.scan = P * w.per_r + P * P / 2 * n * n;
  }
  return w;
}

Cost work_cost(const GeneratorSet& set, const LieWork& w, const LieCheckOptions& o) {
  const double n = set.dim, N = set.axes();
  const double P = pairwise_positions(set.dim, set.axes(), o.window, o.max_exp);
  // The acting generators and Q, the relativity pairs' positions, R at the pairwise positions (n x n each).
  const double bytes = 8 * (n * n * (3 * N + 4) + o.pairs * 2 * N + n * n * N * 2) + 8 * P * n * n;
  return Cost{bytes, w.total() / kFlopsPerSecond};
}

// Blames the option whose reduction makes the check fit the budget: --pairs, then --max-exp, then --window.
void check_lie_budget(const GeneratorSet& set, const LieCheckOptions& o, bool closed, bool commuting,
                      const Where& where) {
  const Cost cost = work_cost(set, lie_work(set, o, closed, commuting), o);
  if (cost.fits()) return;
  auto fits_with = [&](auto&& change) {
    LieCheckOptions u = o;
    change(u);
    return work_cost(set, lie_work(set, u, closed, commuting), u).fits();
  };
  const std::string for_what = fmt::format("for n = {}, N = {} by {}", set.dim, set.axes(),
                                           closed ? "the closed form" : "matrix exponentials");
  if (fits_with([](LieCheckOptions& u) { u.pairs = 1; })) {
    const auto v = largest_fitting(1, o.pairs, [&](std::int64_t k) {
      return fits_with([&](LieCheckOptions& u) { u.pairs = static_cast<int>(k); });
    });
    check_cost(where, "pairs", std::to_string(o.pairs), cost, std::to_string(v), for_what);
  }
  if (fits_with([](LieCheckOptions& u) { u.pairs = 1, u.max_exp = 1, u.max_differences = 1; })) {
    const bool diff = commuting && closed;
    const std::int64_t current = diff ? o.max_differences : o.max_exp;
    const auto v = largest_fitting(1, current, [&](std::int64_t k) {
      return fits_with([&](LieCheckOptions& u) { (diff ? u.max_differences : u.max_exp) = k; });
    });
    check_cost(where, diff ? "max_differences" : "max_exp", std::to_string(current), cost, std::to_string(v),
               for_what + fmt::format(" with {} {}", where.name("pairs"), o.pairs));
  }
  throw_bad_value(where, "generators", fmt::format("{} matrices of {} x {}", set.axes(), set.dim, set.dim),
                  fmt::format("fewer or smaller: even one relativity pair and one scan step {}", cost.excess()));
}

}  // namespace

Cost lie_check_cost(const GeneratorSet& set, const LieCheckOptions& o) {
  // Before the checks run, a set on the maximal torus (with an orthogonal or no Q) counts as commuting,
  // any other as not: check() re-estimates with the measured verdict before its scan.
  const bool torus = detect_torus(set.base).has_value();
  const bool closed = torus && (!set.mixing || orthogonality_defect(*set.mixing) <= orthogonality_tolerance(set.dim));
  const bool closed_route = closed && o.route != Route::matrix_exp;
  return work_cost(set, lie_work(set, o, closed_route, torus), o);
}

void check_lie_inputs(const GeneratorSet& set, const LieCheckOptions& opt, const Where& where) {
  opt.validate(where);
  set.validate();
  check_mixing_range(set, where.context);
  const Encoder enc(set);
  const bool closed = enc.resolve(opt.route, where) == Route::closed_form;
  check_lie_budget(set, opt, closed, detect_torus(set.base).has_value(), where);
  // Every position of the window must be resolvable: (W - 1) sum_i |B_i|_2 <= max_position_scale(n).
  const int n = enc.dim(), N = enc.axes();
  const double limit = max_position_scale(n);
  if (find_unresolvable(enc, Eigen::MatrixXd::Constant(1, N, opt.window - 1.0)).row < 0) return;
  const std::vector<double> norms = spectral_norms(enc, true);
  double sum_2 = 0;
  for (double v : norms) sum_2 += v;
  if (!(sum_2 <= limit))
    throw_bad_value(where, "generators", fmt::format("sum_i |B_i|_2 = {:.3g}", sum_2),
                    fmt::format("at most 1/(16 sqrt(n) eps) = {:.3g} (n = {}): beyond it rounding of the phases is no "
                                "longer small against 1/sqrt(n) and the relativity tolerance exceeds any defect",
                                limit, n));
  throw_bad_value(where, "window", std::to_string(opt.window),
                  fmt::format("at most {} for these generators: (W - 1) sum_i |B_i|_2 must stay <= 1/(16 sqrt(n) "
                              "eps) = {:.3g}, here sum_i |B_i|_2 = {:.3g}",
                              static_cast<long long>(std::floor(limit / sum_2)) + 1, limit, sum_2));
}

LieCheck check(const GeneratorSet& set, const LieCheckOptions& opt, const Where& where) {
  check_lie_inputs(set, opt, where);
  const Encoder enc(set);
  const Route route = enc.resolve(opt.route, where);
  const bool closed = route == Route::closed_form;
  const bool torus_guess = detect_torus(set.base).has_value();
  const auto& B = enc.acting();
  const int n = enc.dim(), N = enc.axes();
  double sum_2 = 0;
  for (const auto& b : B) sum_2 += spectral_norm(b);

  // Progress: the fraction of the estimated flops done.
  LieWork work = lie_work(set, opt, closed, torus_guess);
  std::mutex meter_mutex;
  double done = 0;
  auto advance = [&](double flops) {
    if (!opt.progress) return;
    std::lock_guard<std::mutex> lock(meter_mutex);
    done += flops;
    opt.progress(std::min(1.0, done / std::max(1.0, work.total())));
  };

  LieCheck c;
  c.dim = n;
  c.axes = N;
  c.window = opt.window;
  c.masa_bound = n / 2;
  c.route = closed ? "closed-form torus" : "matrix exponential";

  double max_f = 0;
  for (const auto& b : B) max_f = std::max(max_f, b.norm());
  for (const auto& b : B) c.skew_defect = std::max(c.skew_defect, (b + b.transpose()).norm());
  c.skew_tolerance = 16.0 * n * kEps * max_f;
  for (int i = 0; i < N; ++i)
    for (int j = i + 1; j < N; ++j) c.max_commutator = std::max(c.max_commutator, (B[i] * B[j] - B[j] * B[i]).norm());
  c.commutator_tolerance = 16.0 * n * kEps * max_f * max_f;

  Eigen::MatrixXd V(static_cast<Eigen::Index>(n) * n, N);
  for (int i = 0; i < N; ++i) V.col(i) = B[i].reshaped();
  const Eigen::VectorXd sv = Eigen::BDCSVD<Eigen::MatrixXd>(V).singularValues();
  c.singular_values.assign(sv.data(), sv.data() + sv.size());
  c.rank_tolerance = std::max<double>(static_cast<double>(n) * n, N) * kEps * (sv.size() ? sv[0] : 0.0);
  c.rank = static_cast<int>((sv.array() > c.rank_tolerance).count());

  if (set.mixing) {
    c.has_mixing = true;
    c.orthogonality_defect = orthogonality_defect(*set.mixing);
    c.orthogonality_tolerance = orthogonality_tolerance(n);
    c.det_q = set.mixing->determinant();
    c.orthogonal = c.orthogonality_defect <= c.orthogonality_tolerance;
  }

  c.window_scale = (opt.window - 1) * sum_2;
  advance(work.fixed);
  c.relativity_tolerance = 32.0 * n * kEps * (1.0 + c.window_scale);

  // Relativity: the two far corners, then seeded random pairs of window positions.
  Rng rng(opt.seed, 0);
  const int W = opt.window;
  std::vector<std::pair<Eigen::VectorXd, Eigen::VectorXd>> pairs(static_cast<std::size_t>(opt.pairs));
  for (int k = 0; k < opt.pairs; ++k) {
    Eigen::VectorXd x1(N), x2(N);
    if (k < 2) {
      x1.setConstant(k == 0 ? 0.0 : W - 1.0);
      x2.setConstant(k == 0 ? W - 1.0 : 0.0);
    } else {
      for (int i = 0; i < N; ++i) x1[i] = static_cast<int>(rng.below(W)), x2[i] = static_cast<int>(rng.below(W));
    }
    pairs[static_cast<std::size_t>(k)] = {x1, x2};
  }
  std::vector<double> defect(pairs.size());
  parallel_for(pairs.size(), 0, [&](std::size_t k) {
    const auto& [x1, x2] = pairs[k];
    defect[k] = (enc(x1, route).transpose() * enc(x2, route) - enc(x2 - x1, route)).norm();
    advance(work.relativity / static_cast<double>(pairs.size()));
  });
  for (double d : defect) keep_max(c.relativity_defect, d);
  c.pairs_checked = opt.pairs;
  // Within the phase bound a skew set stays finite; a non-skew one can grow like e^{|x| |B + B^T|} and leave float64.
  auto refuse_overflow = [&](std::string_view what) {
    throw_bad_value(where, "window", std::to_string(W),
                    fmt::format("small enough that R(x) = exp(sum_i x_i B_i) stays in float64: these generators are "
                                "not skew (max |B_i + B_i^T|_F = {:.3g}) and {} is not finite in this window",
                                c.skew_defect, what));
  };
  if (!std::isfinite(c.relativity_defect)) refuse_overflow("R(x1)^T R(x2) - R(x2 - x1)");

  c.skew = c.skew_defect <= c.skew_tolerance;
  c.commuting = c.max_commutator <= c.commutator_tolerance;
  c.independent = c.rank == N;
  c.within_masa_bound = N <= c.masa_bound;
  c.relativity = c.relativity_defect <= c.relativity_tolerance;

  // The scan's cost with the measured verdict (a commuting set off the torus scans differences by
  // matrix exponentials): refuse before it if that breaks the budget.
  const bool differences = c.skew && c.commuting;
  if (differences != torus_guess) {
    check_lie_budget(set, opt, closed, differences, where);
    const double before = work.fixed + work.relativity;
    work = lie_work(set, opt, closed, differences);
    done = std::min(done, before);
  }
  const double per_step = differences ? (closed ? 10.0 * N * n : work.per_r) : work.per_r;
  const std::function<void()> tick = [&] { advance(per_step); };
  const Scan s = differences
                     ? scan_differences(enc, route, W, route == Route::closed_form ? opt.max_differences : opt.max_exp,
                                        opt.seed ^ 0xD1FFull, tick)
                     : scan_pairwise(enc, route, W, opt.max_exp, opt.seed ^ 0x9A12ull, tick);
  if (!std::isfinite(s.min)) refuse_overflow("|R(x) - R(y)|_F");
  c.min_position_distance = s.min;
  c.closest_x = s.x;
  c.closest_y = s.y;
  c.distances_checked = s.checked;
  c.distances_exhaustive = s.exhaustive;
  c.distance_method = s.method;
  c.reversibility = c.independent && c.min_position_distance > c.relativity_tolerance;
  return c;
}

std::string LieCheck::brief_report() const {
  auto yes = [](bool b) { return b ? "yes" : "NO"; };
  std::string out = fmt::format("n = {}, N = {} (MASA bound floor(n/2) = {}), window {}^{}, route: {}\n", dim, axes,
                                masa_bound, window, axes, route);
  out += fmt::format("skew          {:<4} max |B + B^T|_F = {:.3e} (tolerance {:.3e})\n", yes(skew), skew_defect,
                     skew_tolerance);
  out += fmt::format("commuting     {:<4} max |[B_i, B_j]|_F = {:.3e} (tolerance {:.3e})\n", yes(commuting),
                     max_commutator, commutator_tolerance);
  out += fmt::format("independent   {:<4} rank {} of {}\n", yes(independent), rank, axes);
  out += fmt::format("relativity    {:<4} defect {:.3e} over {} pairs (tolerance {:.3e})\n", yes(relativity),
                     relativity_defect, pairs_checked, relativity_tolerance);
  out += fmt::format("reversibility {:<4} min |R(x) - R(y)|_F = {:.3e} over {} comparisons{}\n", yes(reversibility),
                     min_position_distance, distances_checked, distances_exhaustive ? "" : " (sampled)");
  if (has_mixing)
    out += fmt::format("orthogonal Q  {:<4} |Q^T Q - I|_F = {:.3e}, det Q = {:.15g}\n", yes(orthogonal),
                       orthogonality_defect, det_q);
  return out;
}

}  // namespace ropekit
