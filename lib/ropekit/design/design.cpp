// Inverse design of RF-RoPE frequencies (design.hpp): RF-RoPE Corollary 3 / Bochner run backwards, from Phi to p.
#include "ropekit/design/design.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/parallel.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// sin(z)/z, 1 at 0.
double sinc(double z) { return z == 0 ? 1.0 : std::sin(z) / z; }

// The constraints of KernelGrid, for tables built in code (kernel_grid checks a read table).
void check_table(const KernelGrid& t, std::string_view where) {
  if (!(t.step > 0) || !std::isfinite(t.step)) throw_bad_value(where, "step", format_number(t.step), "finite and > 0");
  if (t.phi.size() < 2)
    throw_bad_value(where, "phi", fmt::format("{} values", t.phi.size()), "at least 2 values (lags 0 and h)");
  for (Eigen::Index k = 0; k < t.phi.size(); ++k)
    if (!std::isfinite(t.phi[k])) throw_bad_value(where, fmt::format("phi[{}]", k), format_number(t.phi[k]), "finite");
  if (!(std::fabs(t.phi[0] - 1) <= kPhiZeroTolerance))
    throw_bad_value(where, "Phi(0)", format_number(t.phi[0]), fmt::format("1 to within {}", format_number(kPhiZeroTolerance)));
}

}  // namespace

// ---- the table ---------------------------------------------------------------------------------------------

KernelGrid kernel_grid(const KernelTable& table, std::string_view where) {
  const std::string name = fmt::format("data:{}", table.source);
  auto bad = [&](const std::string& value, const std::string& constraint) {
    throw_bad_value(where, name, value, constraint);
  };
  const Eigen::VectorXd& lags = table.lag;
  const Eigen::Index n = lags.size();
  if (lags[0] != 0) bad(fmt::format("first lag {}", format_number(lags[0])), "0 (the table starts at Phi(0))");
  if (n < 2) bad("1 row", "at least 2 rows (the lag step h is the second lag)");
  if (!(std::fabs(table.value[0] - 1) <= kPhiZeroTolerance))
    bad(fmt::format("Phi(0) {}", format_number(table.value[0])),
        fmt::format("1 to within {} (divide the table by Phi(0) to normalise it)", format_number(kPhiZeroTolerance)));
  // An even grid: x_k = k h, h = x_{N-1}/(N-1), to kEvenGridTolerance relative to the range (text rounding passes).
  const double h = lags[n - 1] / static_cast<double>(n - 1);
  for (Eigen::Index k = 0; k < n; ++k)
    if (!(std::fabs(lags[k] - static_cast<double>(k) * h) <= kEvenGridTolerance * lags[n - 1]))
      bad(fmt::format("row {} lag {}", k + 1, format_number(lags[k])),
          fmt::format("an even grid k h, h = {} (lag {} at row {}), to {} relative; resample the table onto one",
                      format_number(h), format_number(static_cast<double>(k) * h), k + 1,
                      format_number(kEvenGridTolerance)));
  KernelGrid t;
  t.step = h;
  t.phi = table.value;
  return t;
}

// ---- density and certificate --------------------------------------------------------------------------------

std::int64_t default_density_points(std::int64_t n_lags) {
  return std::clamp<std::int64_t>(2 * (n_lags - 1) + 1, 4097, 65537);
}

double density_work(std::int64_t n_lags, std::int64_t points) {
  return static_cast<double>(n_lags) * static_cast<double>(points);
}

DensityEstimate estimate_density(const KernelGrid& t, std::int64_t points, double tolerance, int threads,
                                 std::string_view where) {
  check_table(t, where);
  if (points < 2) throw_bad_value(where, "points", std::to_string(points), "at least 2");
  const std::int64_t N = t.phi.size(), M = points, P = 2 * (M - 1);
  const double h = t.step;
  // Coefficients of the two brackets: a_k = Phi_k (k = 0), 2 Phi_k (k >= 1); b_k = (1 - k/N) a_k (Fejer).
  std::vector<double> a(static_cast<std::size_t>(N)), b(static_cast<std::size_t>(N));
  double S = 0;
  for (std::int64_t k = 0; k < N; ++k) {
    a[k] = (k == 0 ? 1.0 : 2.0) * t.phi[k];
    b[k] = (1.0 - static_cast<double>(k) / static_cast<double>(N)) * a[k];
    S += std::fabs(a[k]);
  }
  // cos(pi r/(M-1)) for r in [0, P): the angle w_j k h = pi j k/(M-1) reduced exactly to r = j k mod P.
  // Each entry from the folded angle in [0, pi/2] (cos on the first quadrant, sign by symmetry).
  std::vector<double> table(static_cast<std::size_t>(P));
  const double m1 = static_cast<double>(M - 1);
  for (std::int64_t r = 0; r < P; ++r) {
    const std::int64_t q = std::min(r, P - r);  // cos(pi r/(M-1)) = cos(pi q/(M-1)), q in [0, M-1]
    const bool flip = 2 * q > M - 1;             // cos(pi q/(M-1)) = -cos(pi (M-1-q)/(M-1))
    const double c = std::cos(std::numbers::pi * static_cast<double>(flip ? M - 1 - q : q) / m1);
    table[static_cast<std::size_t>(r)] = flip ? -c : c;
  }
  DensityEstimate d;
  d.w_max = std::numbers::pi / h;
  d.w.resize(M);
  d.p.resize(M);
  d.p_fejer.resize(M);
  // Chunks of grid points per task; each writes only its own outputs (thread-count independent).
  constexpr std::int64_t kChunk = 16;
  const std::int64_t chunks = (M + kChunk - 1) / kChunk;
  parallel_for(static_cast<std::size_t>(chunks), threads, [&](std::size_t c) {
    const std::int64_t j0 = static_cast<std::int64_t>(c) * kChunk, j1 = std::min(M, j0 + kChunk);
    for (std::int64_t j = j0; j < j1; ++j) {
      // Two partial sums per bracket (even and odd k) to shorten the add chain.
      double s0 = 0, s1 = 0, f0 = 0, f1 = 0;
      std::int64_t r0 = 0, r1 = j;  // j k mod P for k and k + 1
      const std::int64_t j2 = (2 * j) % P;
      std::int64_t k = 0;
      for (; k + 1 < N; k += 2) {
        const double c0 = table[static_cast<std::size_t>(r0)], c1 = table[static_cast<std::size_t>(r1)];
        s0 += a[k] * c0;
        f0 += b[k] * c0;
        s1 += a[k + 1] * c1;
        f1 += b[k + 1] * c1;
        r0 += j2;
        if (r0 >= P) r0 -= P;
        r1 += j2;
        if (r1 >= P) r1 -= P;
      }
      if (k < N) {
        const double c0 = table[static_cast<std::size_t>(r0)];
        s0 += a[k] * c0;
        f0 += b[k] * c0;
      }
      const double theta = std::numbers::pi * static_cast<double>(j) / m1;  // w_j h
      const double weight = h / (2 * std::numbers::pi) * std::pow(sinc(theta / 2), 2);
      d.w[j] = theta / h;
      d.p[j] = weight * (s0 + s1);
      d.p_fejer[j] = weight * (f0 + f1);
    }
  });
  d.w[M - 1] = d.w_max;
  // Trapezoid rule on the even grid, doubled for w < 0.
  const double dw = d.w_max / m1;
  auto trapezoid = [&](auto f) {
    double sum = 0;
    for (std::int64_t j = 0; j < M; ++j) sum += (j == 0 || j == M - 1 ? 0.5 : 1.0) * f(j);
    return 2 * dw * sum;
  };
  d.integral = trapezoid([&](std::int64_t j) { return d.p[j]; });
  d.negative_mass = trapezoid([&](std::int64_t j) { return std::max(0.0, -d.p_fejer[j]); });
  d.negative_mass_untapered = trapezoid([&](std::int64_t j) { return std::max(0.0, -d.p[j]); });
  d.tolerance = tolerance >= 0 ? tolerance : 8 * static_cast<double>(N) * kEps * S;
  d.positive_definite = d.negative_mass <= d.tolerance;
  return d;
}

// ---- sampling ------------------------------------------------------------------------------------------------

DesignSampling parse_design_sampling(std::string_view text, std::string_view where) {
  if (text == "quantile") return DesignSampling::quantile;
  if (text == "iid") return DesignSampling::iid;
  if (text == "antithetic") return DesignSampling::antithetic;
  throw_bad_value(where, "--sampling", fmt::format("'{}'", text), "one of quantile, iid, antithetic");
}

std::string design_sampling_name(DesignSampling s) {
  switch (s) {
    case DesignSampling::quantile: return "quantile";
    case DesignSampling::iid: return "iid";
    case DesignSampling::antithetic: return "antithetic";
  }
  return "?";
}

MagnitudeDistribution magnitude_distribution(const Eigen::VectorXd& w, const Eigen::VectorXd& p) {
  const std::string_view where = "spectral density table";
  const Eigen::Index M = w.size();
  if (M < 2 || p.size() != M) throw_bad_value(where, "w", fmt::format("{} points", M), "at least 2, as many as p");
  if (w[0] != 0) throw_bad_value(where, "w[0]", format_number(w[0]), "0");
  MagnitudeDistribution d;
  d.w = w;
  d.cdf.resize(M);
  d.cdf[0] = 0;
  for (Eigen::Index j = 1; j < M; ++j) {
    if (!(w[j] > w[j - 1])) throw_bad_value(where, "w", format_number(w[j]), "increasing");
    const double lo = std::max(0.0, p[j - 1]), hi = std::max(0.0, p[j]);
    d.cdf[j] = d.cdf[j - 1] + (w[j] - w[j - 1]) * (lo + hi);  // 2 x trapezoid: |w| has density 2 max(p, 0)
  }
  d.mass = d.cdf[M - 1];
  if (!(d.mass > 0) || !std::isfinite(d.mass))
    throw_bad_value(where, "mass", format_number(d.mass), "finite and > 0 (the density is nowhere positive)");
  d.cdf /= d.mass;
  d.cdf[M - 1] = 1;
  return d;
}

double quantile(const MagnitudeDistribution& d, double u) {
  const double* F = d.cdf.data();
  const Eigen::Index M = d.cdf.size();
  // First c with F[c] >= u (c >= 1 as F[0] = 0 < u); the cell [c-1, c] has positive mass.
  const Eigen::Index c = std::clamp<Eigen::Index>(std::lower_bound(F, F + M, u) - F, 1, M - 1);
  const double lo = F[c - 1], hi = F[c];
  const double t = hi > lo ? std::clamp((u - lo) / (hi - lo), 0.0, 1.0) : 1.0;
  const double w = d.w[c - 1] + t * (d.w[c] - d.w[c - 1]);
  return std::max(w, std::numeric_limits<double>::min());
}

namespace {

// The D frequencies by `sampling` from an inverse CDF Q (both routes: the table's |w| distribution, the atoms).
template <class Quantile>
Eigen::VectorXd draw_frequencies(int blocks, DesignSampling sampling, std::uint64_t seed, Quantile&& Q) {
  check_in_range(Where("design"), "blocks", blocks, 1, std::int64_t{1} << 24);
  const double D = blocks;
  Eigen::VectorXd w(blocks);
  if (sampling == DesignSampling::quantile) {
    for (int i = 0; i < blocks; ++i) w[i] = Q((i + 0.5) / D);
    return w;
  }
  Rng rng(seed, kStreamDesign, 0);
  if (sampling == DesignSampling::iid) {
    for (int i = 0; i < blocks; ++i) w[i] = Q(rng.uniform());
    return w;
  }
  for (int i = 0; i < blocks; i += 2) {  // antithetic: U and 1 - U on |w|'s CDF
    const double u = rng.uniform();
    w[i] = Q(u);
    if (i + 1 < blocks) w[i + 1] = Q(1 - u);
  }
  return w;
}

// Var of an antithetic design from the moments of c(U) = cos(Q(U) x): m = E c, m2 = E c^2, pair2 = E (c(U) + c(1-U))^2.
double antithetic_variance(double m, double m2, double pair2, int blocks) {
  const double pairs = blocks / 2, odd = blocks % 2, D = blocks;
  const double var_one = std::max(0.0, m2 - m * m), var_pair = std::max(0.0, pair2 - 4 * m * m);
  return (pairs * var_pair + odd * var_one) / (D * D);
}

}  // namespace

Eigen::VectorXd design_frequencies(const MagnitudeDistribution& d, int blocks, DesignSampling sampling,
                                   std::uint64_t seed) {
  return draw_frequencies(blocks, sampling, seed, [&](double u) { return quantile(d, u); });
}

// ---- the realised kernel and its variance -------------------------------------------------------------------

Eigen::VectorXd realised_kernel(const Eigen::VectorXd& freqs, const Eigen::VectorXd& lags, int threads) {
  Eigen::VectorXd out(lags.size());
  const double D = static_cast<double>(freqs.size());
  parallel_for(static_cast<std::size_t>(lags.size()), threads, [&](std::size_t i) {
    const double x = lags[static_cast<Eigen::Index>(i)];
    double s = 0;
    for (Eigen::Index j = 0; j < freqs.size(); ++j) s += std::cos(freqs[j] * x);
    out[static_cast<Eigen::Index>(i)] = s / D;
  });
  return out;
}

double iid_design_variance(double phi, double phi2, int blocks) {
  return ((1 + phi2) / 2 - phi * phi) / blocks;
}

Eigen::VectorXd antithetic_design_variance(const MagnitudeDistribution& d, const Eigen::VectorXd& lags, int blocks,
                                           int nodes, int threads) {
  const int R = std::max(nodes, 2);
  std::vector<double> q(static_cast<std::size_t>(R));
  for (int r = 0; r < R; ++r) q[static_cast<std::size_t>(r)] = quantile(d, (r + 0.5) / R);
  Eigen::VectorXd out(lags.size());
  parallel_for(static_cast<std::size_t>(lags.size()), threads, [&](std::size_t i) {
    const double x = lags[static_cast<Eigen::Index>(i)];
    std::vector<double> c(static_cast<std::size_t>(R));
    double m = 0, m2 = 0, pair2 = 0;
    for (int r = 0; r < R; ++r) m += c[r] = std::cos(q[r] * x);
    for (int r = 0; r < R; ++r) {
      m2 += c[r] * c[r];
      const double s = c[r] + c[R - 1 - r];
      pair2 += s * s;
    }
    m /= R, m2 /= R, pair2 /= R;
    out[static_cast<Eigen::Index>(i)] = antithetic_variance(m, m2, pair2, blocks);
  });
  return out;
}

// ---- line spectra ----------------------------------------------------------------------------------------------

std::optional<LineSpectrum> line_spectrum(const Encoding& e, std::string* why) {
  auto none = [&](const std::string& reason) -> std::optional<LineSpectrum> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const bool rotary_family = std::holds_alternative<enc::Rope>(e.value) ||
                             std::holds_alternative<enc::RopeMatched>(e.value) ||
                             (std::holds_alternative<enc::RfRope>(e.value) && lag_dims(e) == 1);
  if (!rotary_family)
    return none(fmt::format("{} is not rope, rope-matched or 1-D rf-rope (no exact line spectrum)", family_name(e)));
  FrequencyTable t;
  std::vector<Block> b;
  try {
    t = frequencies(e);
    b = blocks(e, 0.0);
  } catch (const InputError& err) {
    std::string reason = err.what();  // without the library's "ropekit::frequencies: " (the caller names the encoding)
    if (const std::string head = "ropekit::frequencies: "; reason.rfind(head, 0) == 0) reason.erase(0, head.size());
    return none(fmt::format("its frequencies are not fixed ({})", reason));
  }
  // tr G(0) block by block: a rotary block of order 1 is 2 c_0 (m_i), a real block of order 1 is its copies times c_0
  // (the identity dims: the atom at 0). Rotary blocks follow the frequency table's rows.
  std::vector<double> w, tr;
  double zero = 0, total = 0;
  Eigen::Index row = 0;
  for (const Block& k : b) {
    if (k.order() != 1 || (k.rotary && row >= t.theta.rows()))
      return none("a block that is not a plain rotation or identity");
    const double v = trace(k);
    if (!(v >= 0) || !std::isfinite(v)) return none(fmt::format("a block with tr G(0) = {}", format_number(v)));
    if (k.rotary) {
      w.push_back(std::fabs(t.theta(row++, 0)));
      tr.push_back(v);
    } else {
      zero += v;
    }
    total += v;
  }
  if (row != t.theta.rows() || !(total > 0)) return none("blocks that do not match the frequency table");
  if (zero > 0) w.insert(w.begin(), 0.0), tr.insert(tr.begin(), zero);
  std::vector<std::size_t> order(w.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return w[i] < w[j]; });
  LineSpectrum s;
  const auto F = static_cast<Eigen::Index>(w.size());
  s.w.resize(F);
  s.mass.resize(F);
  s.cdf.resize(F);
  double c = 0;
  for (Eigen::Index i = 0; i < F; ++i) {
    s.w[i] = w[order[i]];
    s.mass[i] = tr[order[i]] / total;
    s.cdf[i] = c += s.mass[i];
  }
  s.cdf[F - 1] = 1;
  if (why) why->clear();
  return s;
}

Eigen::VectorXd line_kernel(const LineSpectrum& s, const Eigen::VectorXd& lags) {
  Eigen::VectorXd out(lags.size());
  for (Eigen::Index i = 0; i < lags.size(); ++i) {
    double sum = 0;
    for (Eigen::Index k = 0; k < s.w.size(); ++k) sum += s.mass[k] * std::cos(s.w[k] * lags[i]);
    out[i] = sum;
  }
  return out;
}

double line_identity_tolerance(const LineSpectrum& s) {
  return std::max(1e-12, 8 * static_cast<double>(s.w.size()) * kEps);
}

double quantile(const LineSpectrum& s, double u) {
  const double* F = s.cdf.data();
  const Eigen::Index n = s.cdf.size();
  const Eigen::Index k = std::min<Eigen::Index>(std::lower_bound(F, F + n, u) - F, n - 1);
  return std::max(s.w[k], std::numeric_limits<double>::min());
}

Eigen::VectorXd design_frequencies(const LineSpectrum& s, int blocks, DesignSampling sampling, std::uint64_t seed) {
  return draw_frequencies(blocks, sampling, seed, [&](double u) { return quantile(s, u); });
}

Eigen::VectorXd antithetic_design_variance(const LineSpectrum& s, const Eigen::VectorXd& lags, int blocks,
                                           int threads) {
  // The cells of (0, 1) between consecutive cut points {0, cdf_k, 1 - cdf_k, 1}; on each, Q(u) and Q(1 - u) are
  // single atoms (found at the cell's midpoint), the cell's length its probability.
  std::vector<double> cuts = {0.0, 1.0};
  for (Eigen::Index k = 0; k < s.cdf.size(); ++k) cuts.push_back(s.cdf[k]), cuts.push_back(1 - s.cdf[k]);
  std::sort(cuts.begin(), cuts.end());
  const double* F = s.cdf.data();
  const Eigen::Index n = s.cdf.size();
  auto atom = [&](double u) { return std::min<Eigen::Index>(std::lower_bound(F, F + n, u) - F, n - 1); };
  struct Cell {
    Eigen::Index a, b;
    double p;
  };
  std::vector<Cell> cells;
  for (std::size_t j = 0; j + 1 < cuts.size(); ++j) {
    const double p = cuts[j + 1] - cuts[j], mid = (cuts[j] + cuts[j + 1]) / 2;
    if (p > 0) cells.push_back({atom(mid), atom(1 - mid), p});
  }
  Eigen::VectorXd out(lags.size());
  parallel_for(static_cast<std::size_t>(lags.size()), threads, [&](std::size_t i) {
    const double x = lags[static_cast<Eigen::Index>(i)];
    Eigen::VectorXd c(n);
    for (Eigen::Index k = 0; k < n; ++k) c[k] = std::cos(s.w[k] * x);
    double m = 0, m2 = 0, pair2 = 0;
    for (const Cell& cell : cells) {
      m += cell.p * c[cell.a];
      m2 += cell.p * c[cell.a] * c[cell.a];
      pair2 += cell.p * (c[cell.a] + c[cell.b]) * (c[cell.a] + c[cell.b]);
    }
    out[static_cast<Eigen::Index>(i)] = antithetic_variance(m, m2, pair2, blocks);
  });
  return out;
}

}  // namespace ropekit
