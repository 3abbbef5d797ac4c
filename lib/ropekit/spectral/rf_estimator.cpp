#include "ropekit/spectral/rf_estimator.hpp"

#include <cmath>
#include <numeric>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/enum_text.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"

namespace ropekit {

namespace {
constexpr std::uint64_t kStreamContent = 0xC0'47E47;  // the content stream of a seed
}

namespace {
constexpr EnumTable<ContentKind, 3> kContentKinds{
    {{ContentKind::random, "random"}, {ContentKind::correlated, "correlated"}, {ContentKind::aligned, "aligned"}}};
constexpr EnumTable<Sampling, 3> kSamplings{
    {{Sampling::iid, "iid"}, {Sampling::antithetic, "antithetic"}, {Sampling::stratified, "stratified"}}};
}  // namespace

ContentKind parse_content_kind(std::string_view name) {
  return parse_enum(kContentKinds, name, Where("ropekit"), "content");
}

std::string content_kind_name(ContentKind kind) { return std::string(to_text(kContentKinds, kind)); }

Sampling parse_sampling(std::string_view name) { return parse_enum(kSamplings, name, Where("ropekit"), "sampling"); }

std::string sampling_name(Sampling s) { return std::string(to_text(kSamplings, s)); }

void draw_frequencies(const Spectrum& s, Sampling sampling, const QuantileFunction& Q, Rng& rng, std::size_t D,
                      double* w, std::vector<double>& half, std::vector<std::size_t>& perm) {
  switch (sampling) {
    case Sampling::iid:
      sample(s, rng, D, w);
      return;
    case Sampling::antithetic: {
      const std::size_t k = static_cast<std::size_t>(dims(s)), H = (D + 1) / 2;
      half.resize(H * k);
      sample(s, rng, H, half.data());
      for (std::size_t j = 0; j < k; ++j)
        for (std::size_t i = 0; i < D; ++i) {
          const double v = half[j * H + i / 2];
          w[j * D + i] = (i % 2 && i / 2 < D / 2) ? -v : v;
        }
      return;
    }
    case Sampling::stratified:
      perm.resize(D);
      std::iota(perm.begin(), perm.end(), std::size_t{0});
      for (std::size_t i = D; i-- > 1;) std::swap(perm[i], perm[rng.below(i + 1)]);
      for (std::size_t i = 0; i < D; ++i) w[i] = Q((static_cast<double>(perm[i]) + rng.uniform()) / static_cast<double>(D));
      return;
  }
}

Content make_content(ContentKind kind, int blocks, std::uint64_t seed) {
  check_at_least("content vectors", "blocks", blocks, 1);
  Rng rng(seed, kStreamContent);
  Content c;
  c.q.resize(blocks, 2);
  c.k.resize(blocks, 2);
  for (int i = 0; i < blocks; ++i) {
    if (kind == ContentKind::random) {
      for (int j = 0; j < 2; ++j) c.q(i, j) = rng.normal();
      for (int j = 0; j < 2; ++j) c.k(i, j) = rng.normal();
      continue;
    }
    const double alpha = 2 * M_PI * rng.uniform();
    const double rot = kind == ContentKind::correlated ? (2 * rng.uniform() - 1) * M_PI / 3 : 0.0;
    c.q(i, 0) = std::cos(alpha);
    c.q(i, 1) = std::sin(alpha);
    c.k(i, 0) = std::cos(alpha + rot);
    c.k(i, 1) = std::sin(alpha + rot);
  }
  return c;
}

Content content_from_vectors(const std::vector<double>& q, const std::vector<double>& k) {
  const char* where = "content";
  if (q.size() != k.size())
    throw_bad_value(where, "q, k sizes", fmt::format("{} and {}", q.size(), k.size()), "equal");
  if (q.empty() || q.size() % 2)
    throw_bad_value(where, "q size", std::to_string(q.size()), "even and > 0 (2 entries per block)");
  Content c;
  const auto D = static_cast<Eigen::Index>(q.size() / 2);
  c.q.resize(D, 2);
  c.k.resize(D, 2);
  for (Eigen::Index i = 0; i < D; ++i)
    for (int j = 0; j < 2; ++j) {
      const auto at = static_cast<std::size_t>(2 * i + j);
      check_finite(where, "q", q[at]);
      check_finite(where, "k", k[at]);
      c.q(i, j) = q[at];
      c.k(i, j) = k[at];
    }
  return c;
}

Coefficients coefficients(const Content& c) {
  Coefficients out;
  out.A = (c.q.col(0).array() * c.k.col(0).array() + c.q.col(1).array() * c.k.col(1).array()).matrix();
  // J k = (-k_1, k_0), so q^T J k = -q_0 k_1 + q_1 k_0.
  out.B = (c.q.col(1).array() * c.k.col(0).array() - c.q.col(0).array() * c.k.col(1).array()).matrix();
  return out;
}

double score(const Coefficients& c, const Eigen::MatrixXd& w, std::span<const double> lag) {
  double s = 0;
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    double u = 0;
    for (Eigen::Index j = 0; j < w.cols(); ++j) u += lag[static_cast<std::size_t>(j)] * w(i, j);
    s += c.A[i] * std::cos(u) + c.B[i] * std::sin(u);
  }
  return s;
}

double score_by_rotation(const Content& c, const Eigen::MatrixXd& w, std::span<const double> p_m,
                         std::span<const double> p_n) {
  auto rotation = [](double a) {
    Eigen::Matrix2d R;
    R << std::cos(a), -std::sin(a), std::sin(a), std::cos(a);
    return R;
  };
  double s = 0;
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    double am = 0, an = 0;
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      am += p_m[static_cast<std::size_t>(j)] * w(i, j);
      an += p_n[static_cast<std::size_t>(j)] * w(i, j);
    }
    const Eigen::Vector2d q = rotation(am) * c.q.row(i).transpose();
    const Eigen::Vector2d k = rotation(an) * c.k.row(i).transpose();
    s += q.dot(k);
  }
  return s;
}

double expected_score(const Spectrum& s, const Coefficients& c, std::span<const double> lag) {
  return c.qk() * phi(s, lag);
}

double score_variance(const Spectrum& s, const Coefficients& c, std::span<const double> lag, Sampling sampling) {
  if (sampling == Sampling::stratified) return std::numeric_limits<double>::quiet_NaN();
  const KernelValues kv = kernel_values(s, lag);
  auto block = [&](double A, double B) { return A * A * kv.var_cos + B * B * kv.var_sin; };
  const Eigen::Index D = c.A.size();
  double v = 0;
  if (sampling == Sampling::iid) {
    for (Eigen::Index i = 0; i < D; ++i) v += block(c.A[i], c.B[i]);
    return v;
  }
  Eigen::Index i = 0;
  for (; i + 1 < D; i += 2) v += block(c.A[i] + c.A[i + 1], c.B[i] - c.B[i + 1]);
  if (i < D) v += block(c.A[i], c.B[i]);
  return v;
}

double block_variance_paper(double A, double B, double phi, double phi2) {
  return (A * A + B * B) / 2 + (A * A - B * B) / 2 * phi2 - A * A * phi * phi;
}

}  // namespace ropekit
