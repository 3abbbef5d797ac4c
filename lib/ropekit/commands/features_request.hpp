#pragma once
// The request of `ropekit features --encoding E` and ropekit.features: an encoding's relative feature basis at lags
// (encoding.hpp features), validated here once so that the command line and the Python module only bind options
// to a request and render its columns (issue 19). Messages name the command and its options.

#include <string>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit {

struct FeaturesRequest {
  std::string command = "ropekit features";  ///< names the messages
  std::string encoding;                      ///< a spelling as typed
  std::string lags_text;                     ///< "": the default 0:8 (1-D encodings only)
  bool lags_given = false;                   ///< lags given otherwise (as numbers, read in plan.k dimensions)
  std::string format = "csv";                ///< how the rows are rendered (json cells cost more; budgets only)
  bool matrix = false;  ///< the caller holds the values as one float64 matrix, no text (Python; budgets only)
};

/// A validated request: the encoding (relative) and its lag dimension.
struct FeaturesPlan {
  Encoding encoding;
  int k = 1;
};

/// @throws InputError for a spelling that does not parse, an absolute encoding, or no lags for k-D encodings.
FeaturesPlan plan_features(const FeaturesRequest& request);

/// The request's lags (or the default 0:8), checked: causal (finite, >= 0) for 1-D encodings.
/// @throws InputError naming --lags.
Lags feature_lags(const FeaturesRequest& request, const FeaturesPlan& plan);
/// The check of feature_lags on lags given as numbers.
void check_feature_lags(const FeaturesRequest& request, const FeaturesPlan& plan, const Lags& lags);

/// The estimated cost of `rows` lags: the constant and about one column per row of G, each cell printed.
Cost features_cost(const FeaturesRequest& request, const FeaturesPlan& plan, double rows);
/// The number of feature columns the budget counts (2 + n).
double features_budget_columns(const FeaturesPlan& plan);
/// The budget (core/budget.hpp) of `count` lags. @throws InputError naming --lags and the largest count that fits.
void check_features_budget(const FeaturesRequest& request, const FeaturesPlan& plan, std::int64_t count);

/// features(plan.encoding, lags), every row finite. @throws InputError naming the first lag where a column
///         overflows, or the encoding's own message as the command's.
Features feature_rows(const FeaturesRequest& request, const FeaturesPlan& plan, const Lags& lags);

}  // namespace ropekit
