#pragma once
// The fixed-basis probe (Jordan-RoPE paper sections 5.2-5.5, Tables 3, 4, 6, 11, 16):
// for each seed, target and method, ridge-fit the method's features on the training lags and
// score the same weights on lags 0..T-1 of every evaluation length T (spec fixed-basis.md section 4).
// Each basis is computed once on the longest lag grid and each fit solves all targets at once.
// Besides the fixed-basis methods, any encoding of 1-D causal lags (encoding.hpp) is fitted the same way, its
// columns from features(encoding, lags) (issue 7: any encoding fits any target).
// A run's parameters are a FitConfig, read from YAML by cli/fit_config_yaml.hpp; its rows are rendered by

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/fit/fit_config.hpp"

namespace ropekit {

/// One output row: the reference's columns plus n_features, cond, rank and n_train.
struct FitRow {
  std::int64_t seed = 0;
  std::string target;
  std::string method;
  int context = 0;       ///< T (eval) or L (train)
  std::string split;     ///< "train" or "eval"
  int n_features = 0;
  int n_train = 0;       ///< training lags
  double mse = 0;
  double r2 = 0;
  double cond = 0;       ///< cond_2(X^T X + lambda I) of the training system
  int rank = 0;          ///< numerical rank of the training features, without the ridge
  std::string layer_type;  ///< a model's layer type (fit_layers.hpp); "" for methods and encodings given as such
};

/// Training lags for a seed: 0..L-1 when train_points = L, else sort(first train_points of a seeded
/// shuffle of 0..L-1). The shuffle is std::mt19937_64 Fisher-Yates, not torch.randperm: with
/// train_points < L the subset differs from the reference's (the paper's configs all use train_points = L).
std::vector<int> training_lags(int train_context, int train_points, std::int64_t seed);

/// Runs the probe. Rows in the reference's order: seed, then target, then method, then the train
/// row and one eval row per context; the numbers do not depend on `threads` (<= 0: all cores).
/// @throws InputError if the config is invalid.
std::vector<FitRow> run_fixed_basis(const FitConfig& config, int threads = 0);

/// Methods fitted on a seed's training lags, predicting every target of the config on lags 0..T-1.
struct Predictions {
  Eigen::VectorXd lags;              ///< 0..T-1
  Eigen::MatrixXd y;                 ///< rows = lags, cols = config targets
  std::vector<Eigen::MatrixXd> pred; ///< one per method: rows = lags, cols = config targets
};
/// One trigonometric table and target matrix serve every method.
/// @throws InputError for an invalid config, method or context < 1.
Predictions predict(const FitConfig& config, const std::vector<std::string>& methods, int context,
                    std::int64_t seed = 0);

}  // namespace ropekit
