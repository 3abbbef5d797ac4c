#pragma once
// Feature columns of a fixed relative-position basis at integer causal lags
// (Jordan-RoPE paper, sections 5.2-5.5; spec fixed-basis.md sections 1-2).
// Columns of an order-m Jordan method are the first block row of the realified exp(d J_m),
// J_m = (-gamma + i omega) I + eta N_m (paper section 3.3), with the weights absorbing eta.

#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/method.hpp"

namespace ropekit {

/// Run parameters shared by every method of a probe.
struct BasisParams {
  int num_freqs = 16;        ///< F >= 1: frequencies omega_k, k = 0..F-1
  int head_dim = 64;         ///< h, positive and even: grid omega_k = theta^(-2k/h) (h, not 2F)
  double theta = 1e4;        ///< RoPE base, finite, > 0
  double gamma = 1e-4;       ///< damping of E = exp(-gamma d), finite, >= 0
  int train_context = 1024;  ///< L >= 1: x = d/L
  bool bounded_tau = true;   ///< shear time tau = d/(1+d/L) (stabilized) or d (raw)

  /// @throws InputError naming the first broken constraint.
  void validate() const;
  /// omega_k = theta^(-2k/h), k = 0..F-1 (descending from omega_0 = 1).
  Eigen::VectorXd frequencies() const;
};

/// Number of feature columns of `method` under `params` (spec section 2, column "count").
int n_features(const Method& method, const BasisParams& params);

/// Column names in order, e.g. "1", "cos0", "sin0", "x", "E", "that*E", "that^2/2!*E*cos3", "x*e^-cx*sin1".
std::vector<std::string> feature_names(const Method& method, const BasisParams& params);

/// Evaluates many methods on one lag grid, computing the trigonometric table once.
class BasisEvaluator {
 public:
  /// @param lags finite and >= 0 (causal lags; integers in the paper's probes).
  /// @throws InputError on invalid params or lags.
  BasisEvaluator(const BasisParams& params, Eigen::VectorXd lags);

  /// rows = lags.size(), cols = n_features(method, params), in the spec's column order.
  Eigen::MatrixXd features(const Method& method) const;
  /// The rows [first, first + count) of features(method), computed alone (bounded memory for long grids).
  Eigen::MatrixXd features(const Method& method, Eigen::Index first, Eigen::Index count) const;

  const BasisParams& params() const { return params_; }
  const Eigen::VectorXd& lags() const { return lags_; }

 private:
  BasisParams params_;
  Eigen::VectorXd lags_;
  Eigen::MatrixXd cos_;  ///< rows = lags, cols = F: cos(omega_k d)
  Eigen::MatrixXd sin_;  ///< rows = lags, cols = F: sin(omega_k d)
};

/// One-shot convenience: BasisEvaluator(params, lags).features(method).
Eigen::MatrixXd features(const Method& method, const BasisParams& params, const Eigen::VectorXd& lags);

}  // namespace ropekit
