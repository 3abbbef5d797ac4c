#include "ropekit/lie/jordan_positionwise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "ropekit/core/enum_text.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/keep_max.hpp"

namespace ropekit {

namespace {

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

// A B(:, 0..cols) with every sum in index order t = 0, 1, ..., A.cols() - 1 and every product rounded apart (no FMA
// contraction: the project builds with -ffp-contract=off), B row-major with rows `ldb` apart: the same bits on every
// build, in float32 and in float64. (Eigen's products sum in an order that follows the vector width and use FMA
// instructions where the build targets them: jordan positionwise's float32 score error read 1.81550e-07 in an
// AVX-512 build and 2.38419e-07 in an AVX2 one.) The inner loop runs across the columns: it vectorises without
// reordering any one sum.
template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T, class Derived>
RowMajor<T> product_in_order(const Eigen::MatrixBase<Derived>& A, const T* B, Eigen::Index ldb, Eigen::Index cols) {
  RowMajor<T> S = RowMajor<T>::Zero(A.rows(), cols);
  for (Eigen::Index r = 0; r < A.rows(); ++r) {
    T* __restrict out = S.row(r).data();
    for (Eigen::Index t = 0; t < A.cols(); ++t) {
      const T w = A(r, t);
      const T* __restrict bt = B + t * ldb;
      for (Eigen::Index c = 0; c < cols; ++c) out[c] += w * bt[c];
    }
  }
  return S;
}

}  // namespace

namespace {
constexpr EnumTable<JordanVariant, 3> kVariants{
    {{JordanVariant::raw, "raw"}, {JordanVariant::scaled, "scaled"}, {JordanVariant::stabilized, "stabilized"}}};
constexpr EnumTable<Factorization, 2> kFactorizations{{{Factorization::plain, "plain"}, {Factorization::centred, "centred"}}};
}  // namespace

const char* to_string(JordanVariant v) { return to_text(kVariants, v).data(); }
const char* to_string(Factorization f) { return to_text(kFactorizations, f).data(); }

void PositionwiseParams::validate(const Where& where) const {
  check_in_range(where, "m", m, 1, kMaxJordanOrder);
  check_nonnegative(where, "c", c);
  check_finite(where, "eta", eta);
  if (gamma) check_nonnegative(where, "gamma", *gamma);
  check_finite(where, "omega", omega);
  check_at_least(where, "train_context", train_context, 1);
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

void PositionwiseOptions::validate(const Where& where) const {
  check_in_range(where, "window", window, 2, 1 << 24);
  if (center) check_finite(where, "center", *center);
  check_in_range(where, "samples", samples, 2, 4097);
}

namespace {

// ln of max_{q < m} (a s)^q / q! (a s >= 0): the nilpotent factor's largest coefficient.
double log_poly(int m, double as) {
  double best = 0;
  const double l = std::log(as);
  for (int q = 1; q < m; ++q) best = std::max(best, q * l - std::lgamma(q + 1.0));
  return best;
}

constexpr double kLogMax64 = 709.78;  // ln DBL_MAX
constexpr double kLogMax32 = 88.72;   // ln FLT_MAX
constexpr double kMax32 = 3.4028234e38;

// The a priori bounds of check_positionwise_range: empty if every number stays finite, else which range
// ("float32" or "float64") is left.
std::string range_violation(const PositionwiseParams& p, const PositionwiseOptions& o) {
  const double W1 = o.window - 1.0, L = p.train_context, margin = std::log(4.0 * p.m);
  for (JordanVariant v : {JordanVariant::raw, JordanVariant::scaled, JordanVariant::stabilized}) {
    const double gamma = v == JordanVariant::scaled ? p.c / L : p.gamma.value_or(p.c / L);
    const double eta = std::fabs(v == JordanVariant::scaled ? p.eta / L : p.eta), omega = std::fabs(p.omega);
    auto shear = [&](double t) { return v == JordanVariant::stabilized ? t / (1.0 + t / L) : t; };
    if (!(gamma <= kMax32 && eta <= kMax32 && omega <= kMax32)) return "float32";
    for (double c0 : {0.0, o.resolved_center()}) {
      const double before = std::max(0.0, c0), after = std::max(0.0, W1 - c0);  // |t| reach on each side
      const double T = std::max(before, after);
      const double lp = log_poly(p.m, eta * shear(T));
      const double log_q = gamma * before + lp, log_k = gamma * after + lp;  // largest query / key entries
      const double log_prod = std::log(2.0 * p.m) + log_q + log_k;
      if (!(omega * T <= kMax32 / 2 && eta * shear(T) <= kMax32 / 2 && std::max(log_q, log_k) + margin <= kLogMax32 &&
            log_prod + margin <= kLogMax32))
        return "float32";
      const double rounding = std::log(6.0 * p.m + 4 + 2 * (gamma + omega) * T);
      if (!(log_prod + rounding + margin <= kLogMax64)) return "float64";
    }
    // Relative kernels at lags up to W - 1, the group law at lags up to 2(W - 1) and its products.
    const double lp1 = log_poly(p.m, eta * shear(W1)), lp2 = log_poly(p.m, eta * shear(2 * W1));
    if (!(std::log(2.0 * p.m) + 2 * lp1 + margin <= kLogMax64 && lp2 + margin <= kLogMax64 &&
          omega * 2 * W1 <= 0x1p1023))
      return "float64";
  }
  return "";
}

}  // namespace

void check_positionwise_range(const PositionwiseParams& p, const PositionwiseOptions& o, const Where& where,
                              const std::vector<std::string>& blame) {
  const std::string range = range_violation(p, o);
  if (range.empty()) return;
  const std::string why = fmt::format(
      "beyond it the position-wise factors e^(gamma t) (eta s)^p/p! R(omega t), |t| < {}, or their {}-term "
      "products leave the {} range{}",
      format_number(std::max({o.window - 1.0, std::fabs(o.resolved_center()), std::fabs(o.window - 1 - o.resolved_center())})),
      2 * p.m, range, range == "float32" ? " of the float32 score path (3.4e38)" : " (1.8e308)");
  // The real parameters: read and replace one by name (gamma only when given: else it is c/L).
  auto get = [&](const std::string& name) {
    return name == "omega" ? p.omega : name == "c" ? p.c : name == "eta" ? p.eta : p.gamma.value_or(0.0);
  };
  auto with = [&](const std::string& name, double x) {
    PositionwiseParams r = p;
    if (name == "omega") r.omega = x;
    else if (name == "c") r.c = x;
    else if (name == "eta") r.eta = x;
    else r.gamma = x;
    return r;
  };
  for (const auto& name : blame) {
    PositionwiseOptions u = o;
    if (name == "omega" || name == "gamma" || name == "c" || name == "eta") {
      if (name == "gamma" && !p.gamma) continue;
      if (!range_violation(with(name, 0.0), o).empty()) continue;  // reducing it alone does not help
      const double value = get(name), sign = value < 0 ? -1.0 : 1.0;
      const double limit = largest_fitting_real(1e-300, std::fabs(value), [&](double x) {
        return range_violation(with(name, sign * x), o).empty();
      });
      throw_bad_value(where, name, format_number(value),
                      fmt::format("at most {} in magnitude with the other values: {}", format_number(limit), why));
    }
    if (name == "window") {
      u.window = 2;
      if (o.center) u.center = std::min(std::max(*o.center, 0.0), 1.0);
      if (!range_violation(p, u).empty()) continue;
      const auto limit = largest_fitting(2, o.window, [&](std::int64_t w) {
        PositionwiseOptions r = o;
        r.window = static_cast<int>(w);
        return range_violation(p, r).empty();
      });
      if (limit < 2) continue;
      throw_bad_value(where, name, std::to_string(o.window),
                      fmt::format("at most {} with the other values: {}", limit, why));
    }
    if (name == "center" && o.center) {
      u.center.reset();
      if (!range_violation(p, u).empty()) continue;
      throw_bad_value(where, name, format_number(*o.center),
                      fmt::format("nearer the window's middle, (W - 1)/2 = {}: {}", format_number((o.window - 1) / 2.0),
                                  why));
    }
  }
  throw_bad_value(where, blame.empty() ? std::string("parameters") : blame.front(), "as given",
                  fmt::format("smaller: {}", why));
}

Cost positionwise_cost(const PositionwiseParams& p, const PositionwiseOptions& o) {
  const double m = p.m, P = o.samples + 2.0, pairs = P * (P + 1) / 2, rows = 6;
  const double threads = std::max(1u, std::thread::hardware_concurrency());
  // Per pair: 4 products of 2m x 2m blocks (16 m^3 flops... 2 (2m)^3 each) and ~10 (2m)^2 element operations.
  const double seconds = rows * (o.window * (2 * m + 30) / kElementsPerSecond + pairs * 64 * m * m * m / kFlopsPerSecond +
                                 pairs * 40 * m * m / kElementsPerSecond);
  // Keys, their float32 and absolute copies, the stacked kernels; per thread the products of one query row.
  const double block = 4 * m * m * P * 8;
  return Cost{block * (5 + 4 * threads), seconds};
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
  check_positionwise_range(p, o, Where("position-wise measurement"));
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
  RowMajor<double> keys(k, k * P), lags(k * P, k);
  RowMajor<float> keys32(k, k * P);
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
  const RowMajor<double> keys_abs = keys.cwiseAbs();

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
    // S(i, j) for j = pos[0..a], in float64 and float32; |A^-T|^T |A|; G(pos[b]) G(pos[a]) stacked.
    const RowMajor<double> S64 = product_in_order(Aq[a].transpose(), keys.data(), keys.cols(), cols);
    const RowMajor<float> S32 = product_in_order(Aq32[a].transpose(), keys32.data(), keys32.cols(), cols);
    const RowMajor<double> terms = product_in_order(Aq[a].cwiseAbs().transpose(), keys_abs.data(), keys_abs.cols(), cols);
    const RowMajor<double> group = product_in_order(lags.topRows(cols), lags.row(a * k).data(), k, k);
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
