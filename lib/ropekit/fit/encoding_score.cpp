#include "ropekit/fit/encoding_score.hpp"

#include "ropekit/core/lags.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/fit/linear_fit.hpp"
#include "ropekit/fit/metrics.hpp"

namespace ropekit {

std::vector<EncodingScore> score_encoding(const Encoding& e, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                                          int train_context, const std::vector<int>& eval_contexts, double ridge) {
  const Eigen::MatrixXd X = features(e, Lags(lags)).values;
  auto below = [&](double limit) {
    Eigen::Index n = 0;
    while (n < lags.size() && lags[n] < limit) ++n;
    return n;
  };
  const Eigen::Index n_train = below(train_context);
  RidgeOptions o;
  o.lambda = ridge;
  const RidgeFit fit = fit_ridge(X.topRows(n_train), y.head(n_train), o);
  const Eigen::VectorXd pred = X * fit.weights.col(0);
  std::vector<EncodingScore> rows;
  auto add = [&](int context, const char* split, Eigen::Index n) {
    const auto q = fit_quality(pred.head(n), y.head(n));
    rows.push_back({context, split, n, q.mse, q.r2, fit.cond});
  };
  add(train_context, "train", n_train);
  for (int T : eval_contexts) add(T, "eval", below(T));
  return rows;
}

}  // namespace ropekit
