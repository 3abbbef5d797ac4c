#include "ropekit/jordan_positionwise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ropekit/error.hpp"
#include "ropekit/parallel.hpp"
#include "ropekit/keep_max.hpp"

namespace ropekit {

namespace {

constexpr const char* kParams = "ropekit::PositionwiseParams";
constexpr const char* kOptions = "ropekit::PositionwiseOptions";
constexpr double kUnit = std::numeric_limits<double>::epsilon() / 2;  // u = 2^-53

double max_abs(const Eigen::MatrixXd& M) { return M.cwiseAbs().maxCoeff(); }

// Largest |entry| of G(d) at shear time s without forming it: max_p |coef_p| * max(|cos|, |sin|).
double block_max_entry(const JordanBlock& b, double d, double s) {
  const double rot = std::max(std::fabs(std::cos(b.omega * d)), std::fabs(std::sin(b.omega * d)));
  return jordan_coefficients(b, d, s).cwiseAbs().maxCoeff() * rot;
}

// The float32 path of a float32 model: G_v(d) with the position, the parameters, exp, the powers and
// cos / sin all in float32 (as the reference implementation computes its factors).
Eigen::MatrixXf relative_kernel_f32(const PositionwiseParams& p, JordanVariant v, float d) {
  const JordanBlock b = variant_block(p, v);
  const float gamma = static_cast<float>(b.gamma), eta = static_cast<float>(b.eta), omega = static_cast<float>(b.omega);
  const float s = v == JordanVariant::stabilized ? d / (1.0f + std::fabs(d) / static_cast<float>(p.train_context)) : d;
  const float c = std::cos(omega * d), sn = std::sin(omega * d);
  Eigen::Matrix2f R;
  R << c, -sn, sn, c;
  std::vector<float> coef(b.m);
  coef[0] = std::exp(-gamma * d);
  for (int q = 1; q < b.m; ++q) coef[q] = coef[q - 1] * (eta * s) / static_cast<float>(q);
  Eigen::MatrixXf G = Eigen::MatrixXf::Zero(2 * b.m, 2 * b.m);
  for (int r = 0; r < b.m; ++r)
    for (int col = r; col < b.m; ++col) G.block<2, 2>(2 * r, 2 * col) = coef[col - r] * R;
  return G;
}

}  // namespace

const char* to_string(JordanVariant v) {
  switch (v) {
    case JordanVariant::raw: return "raw";
    case JordanVariant::scaled: return "scaled";
    case JordanVariant::stabilized: return "stabilized";
  }
  return "?";
}

const char* to_string(Factorization f) { return f == Factorization::plain ? "plain" : "centred"; }

void PositionwiseParams::validate() const {
  if (m < 1 || m > kMaxJordanOrder)
    throw_bad_value(kParams, "m", std::to_string(m), fmt::format("an integer in [1, {}]", kMaxJordanOrder));
  check_nonnegative(kParams, "c", c);
  check_finite(kParams, "eta", eta);
  if (gamma) check_nonnegative(kParams, "gamma", *gamma);
  check_finite(kParams, "omega", omega);
  check_at_least(kParams, "train_context", train_context, 1);
}

JordanBlock variant_block(const PositionwiseParams& p, JordanVariant v) {
  p.validate();
  const double L = p.train_context;
  JordanBlock b{p.m, p.gamma.value_or(p.c / L), p.omega, p.eta};
  if (v == JordanVariant::scaled) b.gamma = p.c / L, b.eta = p.eta / L;
  return b;
}

double shear_time(const PositionwiseParams& p, JordanVariant v, double t) {
  if (v != JordanVariant::stabilized) return t;
  return t / (1.0 + std::fabs(t) / p.train_context);
}

Eigen::MatrixXd relative_kernel(const PositionwiseParams& p, JordanVariant v, double d) {
  return jordan_exp_sheared(variant_block(p, v), d, shear_time(p, v, d));
}

Eigen::MatrixXd key_factor(const PositionwiseParams& p, JordanVariant v, double t) { return relative_kernel(p, v, -t); }

Eigen::MatrixXd query_factor(const PositionwiseParams& p, JordanVariant v, double t) {
  return relative_kernel(p, v, t).transpose();
}

void PositionwiseOptions::validate() const {
  check_at_least(kOptions, "window", window, 2);
  if (window > (1 << 24)) throw_bad_value(kOptions, "window", std::to_string(window), "<= 16777216");
  if (center) check_finite(kOptions, "center", *center);
  if (samples < 2 || samples > 4097)
    throw_bad_value(kOptions, "samples", std::to_string(samples), "an integer in [2, 4097]");
}

std::vector<int> sample_positions(int window, int samples, std::optional<double> center) {
  std::vector<int> pos;
  for (int k = 0; k < samples; ++k)
    pos.push_back(static_cast<int>(std::llround(static_cast<double>(k) * (window - 1) / (samples - 1))));
  if (center)
    for (double c : {std::floor(*center), std::ceil(*center)})
      if (c >= 0 && c <= window - 1) pos.push_back(static_cast<int>(c));
  std::sort(pos.begin(), pos.end());
  pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
  return pos;
}

PositionwiseRow measure_positionwise(const PositionwiseParams& p, JordanVariant v, Factorization f,
                                     const PositionwiseOptions& o) {
  p.validate();
  o.validate();
  const JordanBlock block = variant_block(p, v);
  const double c0 = f == Factorization::plain ? 0.0 : o.resolved_center();
  PositionwiseRow row;
  row.variant = v;
  row.factorization = f;
  row.m = p.m;
  row.window = o.window;
  row.center = c0;
  row.gamma = block.gamma;
  row.eta = block.eta;

  // Dynamic range over every window position: A(t)^{-T} = G(t)^T has the entries of G(t); A(t) = G(-t).
  for (int q = 0; q < o.window; ++q) {
    const double t = q - c0, s = shear_time(p, v, t);
    keep_max(row.max_query_factor, block_max_entry(block, t, s));
    keep_max(row.max_key_factor, block_max_entry(block, -t, -s));
  }

  // Factors at the sampled positions, in float64 and by the float32 path; the keys side by side
  // (2m x 2m P) and G at the sampled lags stacked (2m P x 2m), so that each query position is one product.
  const std::vector<int> pos = sample_positions(o.window, o.samples, o.resolved_center());
  const Eigen::Index P = static_cast<Eigen::Index>(pos.size()), k = 2 * p.m;
  std::vector<Eigen::MatrixXd> Aq(P);
  std::vector<Eigen::MatrixXf> Aq32(P);
  Eigen::MatrixXd keys(k, k * P), lags(k * P, k);
  Eigen::MatrixXf keys32(k, k * P);
  const float c0f = static_cast<float>(c0);
  for (Eigen::Index a = 0; a < P; ++a) {
    const double t = pos[a] - c0;
    const float tf = static_cast<float>(pos[a]) - c0f;
    Aq[a] = query_factor(p, v, t);
    keys.middleCols(a * k, k) = key_factor(p, v, t);
    Aq32[a] = relative_kernel_f32(p, v, tf).transpose();
    keys32.middleCols(a * k, k) = relative_kernel_f32(p, v, -tf);
    lags.middleRows(a * k, k) = relative_kernel(p, v, pos[a]);
  }
  const Eigen::MatrixXd keys_abs = keys.cwiseAbs();

  // Causal pairs j <= i: one task per query position, reduced in order (thread-count independent).
  struct Acc {
    double max_ref = 0, max_s64 = 0, max_abs_terms = 0, max_rel_diff = 0, max_f32_diff = 0, max_f32_lag = 0;
    double max_gsum = 0, max_group_diff = 0;
  };
  std::vector<Acc> acc(static_cast<std::size_t>(P));
  parallel_for(static_cast<std::size_t>(P), 0, [&](std::size_t ua) {
    const auto a = static_cast<Eigen::Index>(ua);
    Acc& r = acc[ua];
    const Eigen::Index cols = k * (a + 1);
    const Eigen::MatrixXd S64 = Aq[a].transpose() * keys.leftCols(cols);     // S(i, j) for j = pos[0..a]
    const Eigen::MatrixXf S32 = Aq32[a].transpose() * keys32.leftCols(cols);
    const Eigen::MatrixXd terms = Aq[a].cwiseAbs().transpose() * keys_abs.leftCols(cols);
    const Eigen::MatrixXd group = lags.topRows(cols) * lags.middleRows(a * k, k);  // G(pos[b]) G(pos[a])
    for (Eigen::Index b = 0; b <= a; ++b) {
      const auto s64 = S64.middleCols(b * k, k);
      const Eigen::MatrixXd ref = relative_kernel(p, v, pos[a] - pos[b]);
      const double ref_max = max_abs(ref);
      keep_max(r.max_ref, ref_max);
      keep_max(r.max_s64, s64.cwiseAbs().maxCoeff());
      keep_max(r.max_abs_terms, terms.middleCols(b * k, k).maxCoeff());
      keep_max(r.max_rel_diff, (s64 - ref).cwiseAbs().maxCoeff());
      const double e32 = (S32.middleCols(b * k, k).cast<double>() - s64).cwiseAbs().maxCoeff();
      keep_max(r.max_f32_diff, e32);
      keep_max(r.max_f32_lag, e32 / ref_max);
      // Group law on the sampled lags s = pos[b] <= t = pos[a].
      const Eigen::MatrixXd gsum = relative_kernel(p, v, pos[a] + pos[b]);
      keep_max(r.max_gsum, max_abs(gsum));
      keep_max(r.max_group_diff, (group.middleRows(b * k, k) - gsum).cwiseAbs().maxCoeff());
    }
  });
  Acc total;
  for (const Acc& r : acc) {
    keep_max(total.max_ref, r.max_ref);
    keep_max(total.max_s64, r.max_s64);
    keep_max(total.max_abs_terms, r.max_abs_terms);
    keep_max(total.max_rel_diff, r.max_rel_diff);
    keep_max(total.max_f32_diff, r.max_f32_diff);
    keep_max(total.max_f32_lag, r.max_f32_lag);
    keep_max(total.max_gsum, r.max_gsum);
    keep_max(total.max_group_diff, r.max_group_diff);
  }
  row.pairs = static_cast<std::int64_t>(P) * (P + 1) / 2;
  row.cancellation = total.max_abs_terms / total.max_ref;
  row.relativity_defect = total.max_rel_diff / total.max_ref;
  row.f32_score_error = total.max_f32_diff / total.max_s64;
  row.f32_lag_error = total.max_f32_lag;
  row.group_law_defect = total.max_group_diff / total.max_gsum;
  // Rounding bound of the float64 score: each factor entry carries <= (2 + 2p) u from exp and the p-fold
  // product (p < m), plus |gamma t| u and |omega t| u from rounding its arguments; the 2m-term dot
  // product adds gamma_2m ~ 2m u; all relative to |A^{-T}|^T |A|, i.e. kappa times the largest score.
  const double t_max = std::max(std::fabs(c0), std::fabs(o.window - 1 - c0));
  row.rounding_bound =
      kUnit * row.cancellation * (6.0 * p.m + 4.0 + 2.0 * (std::fabs(block.gamma) + std::fabs(block.omega)) * t_max);
  return row;
}

std::vector<PositionwiseRow> measure_positionwise_all(const PositionwiseParams& p, const PositionwiseOptions& o) {
  std::vector<PositionwiseRow> rows;
  for (JordanVariant v : {JordanVariant::raw, JordanVariant::scaled, JordanVariant::stabilized})
    for (Factorization f : {Factorization::plain, Factorization::centred}) rows.push_back(measure_positionwise(p, v, f, o));
  return rows;
}

}  // namespace ropekit
