#include "ropekit/commands/features_request.hpp"

#include <span>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/finite.hpp"

namespace ropekit {

FeaturesPlan plan_features(const FeaturesRequest& a) {
  const Where where = Where::options(a.command);
  FeaturesPlan p;
  p.encoding = parse_encoding_for(a.command, a.encoding);
  if (!is_relative(p.encoding))
    throw_bad_value(where, "encoding", "'" + a.encoding + "'",
                    "a relative encoding: sinusoidal is absolute and has no relative feature basis");
  p.k = lag_dims(p.encoding);
  if (a.lags_text.empty() && !a.lags_given && p.k != 1)
    throw_bad_value(where, "lags", "(missing)",
                    fmt::format("given for {}-D lags, e.g. --lags '1,0;0,2' (no default for k-D encodings)", p.k));
  return p;
}

void check_feature_lags(const FeaturesRequest& a, const FeaturesPlan& p, const Lags& lags) {
  if (p.k == 1)
    for (Eigen::Index i = 0; i < lags.rows(); ++i)
      if (!(lags(i, 0) >= 0))
        throw_bad_value(Where::options(a.command), "lags", format_number(lags(i, 0)), "finite and >= 0 (causal lags)");
}

Lags feature_lags(const FeaturesRequest& a, const FeaturesPlan& p) {
  const Lags lags = parse_lags(a.lags_text.empty() ? "0:8" : a.lags_text, p.k, Where::options(a.command), "--lags");
  check_feature_lags(a, p, lags);
  return lags;
}

double features_budget_columns(const FeaturesPlan& p) { return 2 + encoding_size(p.encoding).n; }

Cost features_cost(const FeaturesRequest& a, const FeaturesPlan& p, double rows) {
  const double cols = features_budget_columns(p);
  // Text: the cells rendered (about 120 bytes and 1 us each, twice that as JSON); a matrix: the result and the
  // basis's cos and sin tables (8 bytes each), at the vector sincos's pace (about 1e8 cells a second here).
  const bool json = a.format == "json";
  if (a.matrix) return Cost{rows * cols * 16, rows * cols / 1e8};
  const double per_cell = json ? 240 : 120, rate = json ? 2e5 : 1e6;
  return Cost{rows * cols * (8 + per_cell), rows * cols / rate};
}

void check_features_budget(const FeaturesRequest& a, const FeaturesPlan& p, std::int64_t count) {
  const Cost cost = features_cost(a, p, static_cast<double>(count));
  if (cost.fits()) return;
  check_cost(Where::options(a.command), "lags", fmt::format("{} lags", count), cost,
             fmt::format("{} lags", largest_fitting(1, count, [&](std::int64_t r) {
                           return features_cost(a, p, static_cast<double>(r)).fits();
                         })),
             fmt::format("for {} ({} columns)", a.encoding, features_budget_columns(p)));
}

Features feature_rows(const FeaturesRequest& a, const FeaturesPlan& p, const Lags& lags) {
  Features f = for_encoding(a.command, a.encoding, [&] { return features(p.encoding, lags); });
  // One pass over the (column-major) matrix; the row by row search only to name a lag that overflows.
  if (all_finite(f.values)) return f;
  for (Eigen::Index i = 0; i < f.values.rows(); ++i)
    if (!f.values.row(i).allFinite()) {
      const Eigen::VectorXd lag = lags.row(i).transpose();
      throw_bad_value(Where::options(a.command), "lags",
                      lag_text(std::span<const double>(lag.data(), static_cast<std::size_t>(lag.size()))),
                      fmt::format("lags at which every feature of '{}' is finite (a column overflows float64 there)",
                                  a.encoding));
    }
  return f;
}

}  // namespace ropekit
