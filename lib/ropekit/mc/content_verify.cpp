#include "ropekit/mc/content_verify.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "ropekit/mc/score_null.hpp"

namespace ropekit {

namespace {

constexpr std::uint64_t kStreamContent = 0xC0A7'E470;  // the content's stream of a seed

// Scores beyond this could overflow the fourth-power sums over 2^40 trials: |s| <= |q| |G| |k|, and
// |q| |k| stays below ~ 40 n for normal draws (a 2^-300 tail). 1e60 leaves (1e60 * 40 n)^4 2^40 << DBL_MAX.
constexpr double kMaxOperatorNorm = 1e60;

void check_rho(const Where& where, const char* name, double rho) {
  if (!(rho >= -1 && rho <= 1)) throw_bad_value(where, name, format_number(rho), "in [-1, 1]");
}


}  // namespace

Cost content_verify_cost(std::int64_t trials, int n, double lags, int threads, bool dense_exponential) {
  const double t = static_cast<double>(trials), nn = static_cast<double>(n);
  const double chunks = std::ceil(t / static_cast<double>(kTrialsPerChunk));
  const double workers = std::min(std::min(chunks, 64.0), static_cast<double>(threads > 0 ? threads : default_threads()));
  const double operators = lags * nn * nn * 8.0;
  const double per_worker = 8.0 * (3.0 * nn * static_cast<double>(kTrialsPerChunk) + 8.0 * lags);
  const double moments = (std::min(chunks, 64.0) + 1) * lags * sizeof(Moments);
  // Building G: n^2 entries (closed forms per block), or a dense exponential (nd), ~30 n^3 flops.
  // The null laws' cumulants (score_null.hpp): G's coupled parts, two products of 2n x 2n for a dense G.
  const double build = lags * (2 * nn * nn / kElementsPerSecond +
                               (dense_exponential ? (30.0 + 32.0) * nn * nn * nn / kFlopsPerSecond : 0.0));
  // Per trial: 2 n normals, and per lag G k (2 n^2 flops) and q . (G k) (2 n), plus a per-score overhead.
  const double run = t * (2.0 * nn / kElementsPerSecond + lags * (2.0 * nn * nn + 2.0 * nn) / kFlopsPerSecond +
                          lags * 8.0 / kElementsPerSecond);
  return Cost{operators + workers * per_worker + moments, build + run};
}

std::vector<Moments> content_score_moments(const std::vector<Eigen::MatrixXd>& G, double rho, const McOptions& options) {
  options.validate();
  check_rho(Where("ropekit verify content"), "rho", rho);
  if (G.empty()) throw_bad_value("ropekit verify content", "lags", "none", "at least one lag");
  const Eigen::Index n = G.front().rows();
  if (n < 1) throw_bad_value("ropekit verify content", "operator size", "0", "at least 1");
  for (const auto& g : G)
    if (g.rows() != n || g.cols() != n)
      throw_bad_value("ropekit verify content", "operator size", fmt::format("{} x {}", g.rows(), g.cols()),
                      fmt::format("{} x {} like the first", n, n));
  const double sigma = std::sqrt(std::max(0.0, 1 - rho * rho));
  const std::size_t L = G.size();
  const auto N = options.trials;
  const std::size_t chunks = static_cast<std::size_t>((N + kTrialsPerChunk - 1) / kTrialsPerChunk);
  // Chunks merge in chunk order (merge_chunks, monte_carlo.hpp): the numbers never depend on the threads.
  auto run_chunk = [&](std::size_t chunk, std::vector<Moments>& out) {
    Rng rng(options.seed, kStreamContent, chunk);
    const std::int64_t first = static_cast<std::int64_t>(chunk) * kTrialsPerChunk;
    const auto count = static_cast<Eigen::Index>(std::min<std::int64_t>(kTrialsPerChunk, N - first));
    // Always kTrialsPerChunk columns (a short last chunk is zero-padded): every product has the same shape,
    // so a trial's score is the same bits whatever N is. Trial t draws z1 then z2 (2 n normals) in order.
    Eigen::MatrixXd Q = Eigen::MatrixXd::Zero(n, kTrialsPerChunk), K = Eigen::MatrixXd::Zero(n, kTrialsPerChunk);
    Eigen::MatrixXd GK(n, kTrialsPerChunk);
    Eigen::VectorXd z(2 * n);
    for (Eigen::Index t = 0; t < count; ++t) {
      rng.fill_normal(z.data(), static_cast<std::size_t>(2 * n));
      Q.col(t) = z.head(n);
      K.col(t) = rho * z.head(n) + sigma * z.tail(n);
    }
    out.assign(L, Moments{});
    for (std::size_t l = 0; l < L; ++l) {
      GK.noalias() = G[l] * K;
      ShiftedSums sums;
      for (Eigen::Index t = 0; t < count; ++t) sums.add(Q.col(t).dot(GK.col(t)));
      if (!sums.finite())
        throw InputError(fmt::format("ropekit verify content: a score is not finite at lag {} (G(Dp) is too large "
                                     "for float64 moments; use smaller lags)",
                                     l + 1));
      out[l] = sums.moments();
    }
  };
  return merge_chunks(chunks, L, options.threads, run_chunk, options.progress);
}

bool content_checkable(const Encoding& e) {
  return is_relative(e) && (lag_dims(e) == 1 || std::holds_alternative<enc::Nd>(e.value) ||
                            std::holds_alternative<enc::RfRope>(e.value));
}

ContentVerifyReport verify_content(const ContentVerifyOptions& o, const Where& where) {
  if (!is_relative(o.encoding))
    throw_bad_value(where, "encoding", "'" + spelling(o.encoding) + "'",
                    "a relative encoding: " + family_name(o.encoding) +
                        " is absolute, its score is not a function of the lag alone");
  if (!content_checkable(o.encoding))
    throw_bad_value(where, "encoding", "'" + spelling(o.encoding) + "'",
                    fmt::format("an encoding with an operator: a direct sum with {}-D parts has none yet (check the "
                                "parts one by one)", lag_dims(o.encoding)));
  check_rho(where, "rho", o.rho);
  const double assumed = o.assumed_rho.value_or(o.rho);
  check_rho(where, "assume_rho", assumed);
  if (!(o.alpha > 0 && o.alpha < 1)) throw_bad_value(where, "alpha", format_number(o.alpha), "in (0, 1)");
  o.mc.validate(where);
  const int k = lag_dims(o.encoding);
  if (o.lags.rows() < 1) throw_bad_value(where, "lags", "none", "at least one lag");
  if (o.lags.cols() != k)
    throw_bad_value(where, "lags", fmt::format("{}-D", o.lags.cols()),
                    fmt::format("{}-D lags for {}", k, spelling(o.encoding)));
  const auto L = static_cast<std::size_t>(o.lags.rows());
  // Two checks per lag of the whole run (a shard's bonferroni_lags), not only of the lags given here.
  const std::size_t checks = 2 * (o.bonferroni_lags > 0 ? o.bonferroni_lags : L);
  if (!(o.alpha >= min_alpha(checks)))
    throw_bad_value(where, "alpha", format_number(o.alpha),
                    fmt::format("in [{}, 1) for {} checks: alpha / (2 checks) must be a normal float64 number",
                                format_number(min_alpha(checks)), checks));
  const double z_critical = bonferroni_z(o.alpha, checks);

  // The operators, once per lag, and the closed forms (kernel_rows) at the assumed correlation.
  std::vector<Eigen::MatrixXd> G(L);
  std::vector<double> buf(static_cast<std::size_t>(k));
  for (std::size_t i = 0; i < L; ++i) {
    for (int j = 0; j < k; ++j) buf[static_cast<std::size_t>(j)] = o.lags(static_cast<Eigen::Index>(i), j);
    for (double v : buf) check_finite(where, "lags", v);
    G[i] = relative_operator(o.encoding, buf);
    const double norm = G[i].norm();
    if (!(norm <= kMaxOperatorNorm))
      throw_bad_value(where, "lags", lag_text(buf),
                      fmt::format("a lag where ||G(Dp)||_F <= {} (it is {} there: the scores' moments would leave "
                                  "float64)",
                                  format_number(kMaxOperatorNorm), format_number(norm)));
  }
  const auto rows = kernel_rows(o.encoding, o.lags, assumed);
  // The null laws need N large enough that their skewness is captured by three moments (score_null.hpp):
  // refused before any trial runs, with the N that would do.
  const double N = static_cast<double>(o.mc.trials);
  std::vector<std::array<double, 7>> kappas(L);
  for (std::size_t i = 0; i < L; ++i) {
    kappas[i] = bilinear_score_cumulants(G[i], assumed);
    if (variance_skew_term(kappas[i], N, z_critical) > kMaxSkewTerm) {
      const double skew = skewness(sample_variance_moments(kappas[i], N));
      for (int j = 0; j < k; ++j) buf[static_cast<std::size_t>(j)] = o.lags(static_cast<Eigen::Index>(i), j);
      const auto need = min_calibrated_trials(kappas[i], z_critical, std::int64_t{1} << 40);
      throw_bad_value(where, "trials", std::to_string(o.mc.trials),
                      fmt::format("at least {} for a calibrated variance check at lag {} and alpha {}: the "
                                  "sample variance's skewness {:.3g} at this N is more than its null law's three "
                                  "moments capture at the critical z; raise the trials or alpha",
                                  need, lag_text(buf), format_number(o.alpha), skew));
    }
  }
  const auto moments = content_score_moments(G, o.rho, o.mc);

  ContentVerifyReport r;
  r.dim = static_cast<int>(G.front().rows());
  r.trials = o.mc.trials;
  r.rho = o.rho;
  r.assumed_rho = assumed;
  r.alpha = o.alpha;
  r.alpha_per_check = o.alpha / static_cast<double>(checks);
  r.z_critical = z_critical;
  r.encoding = spelling(o.encoding);
  const double n = static_cast<double>(r.dim);
  for (std::size_t i = 0; i < L; ++i) {
    const Moments& m = moments[i];
    const Eigen::MatrixXd& g = G[i];
    ContentLagCheck c;
    c.lag.resize(static_cast<std::size_t>(k));
    for (int j = 0; j < k; ++j) c.lag[static_cast<std::size_t>(j)] = o.lags(static_cast<Eigen::Index>(i), j);
    // Float64 rounding of one score q^T (G k): 2 n eps sum_ij |q_i| |G_ij| |k_j|, E |q_i| |k_j| <= 1, and of
    // G's entries (a few eps each); a generous 8 (n + 8) eps sum |G_ij|, as verify master's (D + 8) allowance.
    const double round = 8 * (n + 8) * DBL_EPSILON * g.cwiseAbs().sum();
    // The statistics' null laws from the score's exact cumulants at the assumed correlation (score_null.hpp),
    // the rounding allowance added to their variances: z is the normal score of the observed value there.
    const auto& kappa = kappas[i];
    StatisticMoments mean_law = sample_mean_moments(kappa, N);
    mean_law.mean = rows[i].content_mean;  // the closed form under test
    mean_law.variance += round * round;
    c.mean_expected = rows[i].content_mean;
    c.mean_observed = m.mean;
    c.stderr_mean = std::sqrt(mean_law.variance);
    c.z_mean = pearson3_z(c.mean_observed, mean_law);
    c.var_expected = rows[i].content_variance;
    c.var_observed = m.variance();
    // Rounding moves s^2 by at most 2 r s + r^2; the closed form carries a few eps of ||G||_F^2 + rho^2 |tr G^2|.
    const double var_round = 2 * round * std::sqrt(std::max(0.0, c.var_expected)) + round * round +
                             16 * DBL_EPSILON * n * g.squaredNorm();
    StatisticMoments var_law = sample_variance_moments(kappa, N);
    var_law.mean = rows[i].content_variance;
    var_law.variance += var_round * var_round;
    c.var_stderr = std::sqrt(var_law.variance);
    c.z_var = pearson3_z(c.var_observed, var_law);
    c.mean_pass = std::abs(c.z_mean) <= z_critical;
    c.var_pass = std::abs(c.z_var) <= z_critical;
    r.pass = r.pass && c.pass();
    r.max_abs_z_mean = std::max(r.max_abs_z_mean, std::abs(c.z_mean));
    r.max_abs_z_var = std::max(r.max_abs_z_var, std::abs(c.z_var));
    r.lags.push_back(std::move(c));
  }
  return r;
}

}  // namespace ropekit
