#pragma once
// An encoding's ridge fit scored as `ropekit fit` scores it, beside fit-params' tuned encodings (the untuned and
// tuned rows); no solver, so not in the Ceres module.

#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/encodings/types.hpp"

namespace ropekit {

/// The quality of an encoding's ridge fit, as `ropekit fit` scores it: features(e) ridge-fitted on the lags below
/// train_context, the same weights scored on the lags below each evaluation length (all lags from 0).
struct EncodingScore {
  int context = 0;
  std::string split;   ///< "train" or "eval"
  Eigen::Index lags = 0;
  double mse = 0, r2 = 0;
  double cond = 0;     ///< cond(X^T X + ridge I) of the training system
};
/// @param lags sorted, >= 0, starting below train_context; y one value per lag.
std::vector<EncodingScore> score_encoding(const Encoding& e, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                                          int train_context, const std::vector<int>& eval_contexts, double ridge);

}  // namespace ropekit
