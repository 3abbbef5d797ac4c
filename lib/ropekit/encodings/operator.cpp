// The operator-level quantities of encoding.hpp, from the families' blocks (block.hpp's closed forms) or, for nd,
// the dense exponential of the generators: G(Dp), its size, kernel rows (Phi, content moments, rf-rope's expected
// kernel and frequency variance) and the exactness defects.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/keep_max.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/rotary_spectrum.hpp"
#include "ropekit/spectral/rf_estimator.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

namespace {

Eigen::MatrixXd nd_operator(const Encoder& encoder, std::span<const double> lag) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(lag.size()));
  for (std::size_t j = 0; j < lag.size(); ++j) x[j] = -lag[j];  // G(Dp) = R(p_q)^T R(p_k) = R(-Dp)
  return encoder(x);
}

void check_lag(const Encoding& e, std::span<const double> lag) {
  const int k = lag_dims(e);
  if (static_cast<int>(lag.size()) != k)
    throw InputError(fmt::format("encoding {}: lag dimension = {} (must be {})", quote(spelling(e)), lag.size(), k));
  for (double v : lag)
    if (!std::isfinite(v)) throw InputError(fmt::format("lag = {} (must be finite)", format_number(v)));
}

}  // namespace

Eigen::MatrixXd relative_operator(const Encoding& e, std::span<const double> lag, std::optional<double> seq_len) {
  check_lag(e, lag);
  if (const auto* n = std::get_if<enc::Nd>(&e.value)) return nd_operator(Encoder(generators(n->generators)), lag);
  FrequencyCache cache;
  if (const auto* r = std::get_if<enc::RfRope>(&e.value)) return assemble(enc::rf_blocks(*r, lag, cache));
  return assemble(blocks(e, lag[0], seq_len));
}

namespace {
// How many frequencies a schedule has and the dims it leaves unrotated, without computing them.
double freq_count(const FrequencySchedule& f) {
  return std::visit(Overloaded{
                        [](const Geometric& g) {
                          return static_cast<double>(g.count.value_or(default_count(g)));
                        },
                        [](const ExplicitFrequencies& x) { return static_cast<double>(x.values.size()); },
                        [](const SampledFrequencies& s) { return static_cast<double>(s.count); },
                    },
                    f.source);
}
double unrotated_dims(const FrequencySchedule& f) {
  if (const auto* g = std::get_if<Geometric>(&f.source)) return unrotated_dims(*g);
  return 0;
}
}  // namespace

EncodingSize encoding_size(const Encoding& e) {
  return std::visit(
      Overloaded{
          [](const enc::Rope& r) { return EncodingSize{2 * freq_count(r.freqs) + unrotated_dims(r.freqs), freq_count(r.freqs)}; },
          [](const enc::RopeMatched& r) {  // the M = max(1, floor(F / k)) highest frequencies
            const double m = std::max(1.0, std::floor(freq_count(r.freqs) / r.k));
            return EncodingSize{2 * m, m};
          },
          [](const enc::Xpos& x) { return EncodingSize{static_cast<double>(x.dim), x.dim / 2.0}; },
          [](const enc::RfRope& r) { return EncodingSize{2.0 * r.freqs.count, static_cast<double>(r.freqs.count)}; },
          [](const enc::Damped& d) {
            return EncodingSize{2 * freq_count(d.freqs) + unrotated_dims(d.freqs), freq_count(d.freqs)};
          },
          [](const enc::Jordan& j) {
            return EncodingSize{2.0 * j.m * freq_count(j.freqs) + unrotated_dims(j.freqs), freq_count(j.freqs)};
          },
          [](const enc::JordanScaled& j) {
            return EncodingSize{2.0 * j.m * freq_count(j.freqs) + unrotated_dims(j.freqs), freq_count(j.freqs)};
          },
          [](const enc::RealJordan&) { return EncodingSize{2, 0}; },
          [](const enc::Alibi&) { return EncodingSize{2, 0}; },
          [](const enc::Poly& p) { return EncodingSize{static_cast<double>(p.k), 0}; },
          [](const enc::Nope& f) { return EncodingSize{static_cast<double>(f.dim), 0}; },
          [](const enc::DirectSum& d) {
            EncodingSize s;
            for (const auto& p : d.parts) {
              const EncodingSize q = encoding_size(p);
              s.n += q.n;
              s.freqs += q.freqs;
            }
            return s;
          },
          [](const enc::Nd& n) {
            const double dim = generators(n.generators).dim;  // generators of at most 1024 dims: cheap
            return EncodingSize{dim, dim / 2};
          },
          [](const enc::Sinusoidal& s) { return EncodingSize{static_cast<double>(s.dim), s.dim / 2.0}; },
      },
      e.value);
}

int operator_dim(const Encoding& e) {
  const double n = encoding_size(e).n;
  if (!(n <= std::numeric_limits<int>::max()))
    throw InputError(fmt::format("encoding '{}': n = {} (must be at most 2^31 - 1: the size of G)", spelling(e),
                                 format_number(n)));
  return static_cast<int>(n);
}

std::vector<KernelRow> kernel_rows(const Encoding& e, const Lags& lags, double rho, std::optional<double> seq_len) {
  if (!(rho >= -1 && rho <= 1)) throw InputError(fmt::format("rho = {} (must be in [-1, 1])", format_number(rho)));
  if (!is_relative(e))
    throw InputError(fmt::format("encoding '{}' is absolute (not relative): it has no kernel of the lag; "
                                 "ropekit check reports its relativity defect", spelling(e)));
  std::vector<KernelRow> rows(static_cast<std::size_t>(lags.rows()));
  // A fixed sum of rotations: every lag at once through the vector kernels (rotary_spectrum.hpp).
  if (lags.cols() == 1 && lag_dims(e) == 1) {
    const auto n = static_cast<std::size_t>(lags.rows());
    std::vector<double> kern(n), mean(n), var(n);
    if (rotary_kernel(e, lags.data(), n, rho, seq_len, kern.data(), mean.data(), var.data())) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      for (std::size_t i = 0; i < n; ++i) rows[i] = KernelRow{kern[i], mean[i], var[i], nan, nan};
      return rows;
    }
  }
  const auto* rf = std::get_if<enc::RfRope>(&e.value);
  const auto* nd = std::get_if<enc::Nd>(&e.value);
  const std::optional<Encoder> nd_encoder = nd ? std::optional<Encoder>(Encoder(generators(nd->generators))) : std::nullopt;
  FrequencyCache cache;  // frequencies once for all lags
  std::vector<Block> bs;
  auto sums = [&](std::span<const double> lag, double& tr, double& fro, double& trsq) {
    if (nd) {
      const Eigen::MatrixXd G = nd_operator(*nd_encoder, lag);
      tr = G.trace();
      fro = G.squaredNorm();
      trsq = (G * G).trace();
      return;
    }
    tr = fro = trsq = 0;
    if (rf) {
      bs = enc::rf_blocks(*rf, lag, cache);
    } else {
      bs.clear();
      BlockContext ctx{bs, lag[0], seq_len, cache};
      append_blocks(e, ctx);
    }
    for (std::size_t i = 0; i < bs.size(); ++i) {
      if (i % 65536 == 0) check_cancelled();  // Ctrl-C within a lag of a huge encoding (cancel.hpp)
      const Block& b = bs[i];
      tr += trace(b);
      fro += frobenius_squared(b);
      trsq += trace_of_square(b);
    }
  };
  const std::vector<double> zero(static_cast<std::size_t>(lag_dims(e)), 0.0);
  double tr0, fro0, trsq0;
  sums(zero, tr0, fro0, trsq0);
  Coefficients unit;
  if (rf) {
    unit.A = Eigen::VectorXd::Constant(rf->freqs.count, 1.0 / rf->freqs.count);
    unit.B = Eigen::VectorXd::Zero(rf->freqs.count);
  }
  for (Eigen::Index i = 0; i < lags.rows(); ++i) {
    const Eigen::VectorXd row = lags.row(i).transpose();
    const std::span<const double> lag(row.data(), static_cast<std::size_t>(row.size()));
    check_cancelled();  // between lags (issue 20 item 11: Ctrl-C waited for every lag of a big encoding)
    check_lag(e, lag);
    double tr, fro, trsq;
    sums(lag, tr, fro, trsq);
    KernelRow& r = rows[static_cast<std::size_t>(i)];
    r.kernel = tr / tr0;
    r.content_mean = rho * tr;
    r.content_variance = fro + rho * rho * trsq;
    r.expected_kernel = r.frequency_variance = std::numeric_limits<double>::quiet_NaN();
    if (rf) {
      r.expected_kernel = phi(rf->freqs.spectrum, lag);
      // Variance of the realised kernel (1/D) sum_i cos(w_i . Dp) over draws (Prop 4 with A_i = 1/D, B_i = 0);
      // the quantile grid is deterministic.
      if (rf->freqs.seed && rf->freqs.sampling != Sampling::stratified)
        r.frequency_variance = score_variance(rf->freqs.spectrum, unit, lag, rf->freqs.sampling);
    }
  }
  return rows;
}

Eigen::VectorXd kernel(const Encoding& e, const Lags& lags, std::optional<double> seq_len) {
  const auto rows = kernel_rows(e, lags, 1, seq_len);
  Eigen::VectorXd out(lags.rows());
  for (Eigen::Index i = 0; i < out.size(); ++i) out[i] = rows[static_cast<std::size_t>(i)].kernel;
  return out;
}

Eigen::VectorXd content_variance(const Encoding& e, const Lags& lags, double rho, std::optional<double> seq_len) {
  const auto rows = kernel_rows(e, lags, rho, seq_len);
  Eigen::VectorXd out(lags.rows());
  for (Eigen::Index i = 0; i < out.size(); ++i) out[i] = rows[static_cast<std::size_t>(i)].content_variance;
  return out;
}

Exactness exactness(const Encoding& e, const std::vector<double>& window, std::optional<double> seq_len) {
  if (const auto* s = std::get_if<enc::Sinusoidal>(&e.value)) return enc::exactness(*s, window);
  Exactness x;
  const int k = lag_dims(e);
  // Dynamic schemes: each G at seq_len, else at the length a causal model has seen at that lag (T = |Dp| + 1). G
  // is normalised to tr G(0) = n, so a constant temperature (YaRN's attention factor a^2) is not counted as a defect.
  auto raw = [&](double lag) {
    std::vector<double> v(static_cast<std::size_t>(k), 0.0);
    v[0] = lag;
    return relative_operator(e, v, seq_len ? *seq_len : std::abs(lag) + 1);
  };
  const Eigen::MatrixXd G0 = raw(0);
  const double norm = G0.rows() / G0.trace();
  auto G = [&](double lag) -> Eigen::MatrixXd { return norm * raw(lag); };
  std::vector<Eigen::MatrixXd> Gw;  // G at each window lag, built once (the inner loop reuses them)
  for (double s : window) Gw.push_back(G(s));
  const Eigen::Index n = G0.rows();
  for (std::size_t a = 0; a < window.size(); ++a) {
    const Eigen::MatrixXd& Gs = Gw[a];
    // keep_max: a NaN defect (G overflowing at a window lag) shows, never vanishes behind std::max.
    keep_max(x.orthogonality, (Gs.transpose() * Gs - Eigen::MatrixXd::Identity(n, n)).norm());
    keep_max(x.reversibility, (G(-window[a]) * Gs - Eigen::MatrixXd::Identity(n, n)).norm());
    for (std::size_t b = 0; b < window.size(); ++b) {
      const Eigen::MatrixXd Gst = G(window[a] + window[b]);
      keep_max(x.group_law, (Gs * Gw[b] - Gst).norm() / std::max(1.0, Gst.norm()));
    }
  }
  return x;
}

}  // namespace ropekit
