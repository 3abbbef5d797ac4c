#pragma once
// Lags: rows = lags, cols = k (the dimension of positions), the one lag type of every command, and its parser.

#include <span>
#include <string>
#include <string_view>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// rows = lags, cols = k.
using Lags = Eigen::MatrixXd;

/// Parses lags for k-dimensional positions. k = 1: numbers or ranges separated by commas ("0.5,1,2",
/// "0:1024:8"). Any k: lag vectors separated by ';', components by ',' ("1,0;0,2;3,4"); a k >= 2 list
/// without ';' is one lag vector. @throws InputError naming the lag with the wrong number of components.
Lags parse_lags(std::string_view text, int k, std::string_view what = "--lags");
/// The same with messages naming `where` (e.g. "ropekit verify master") and the option `what`.
Lags parse_lags(std::string_view text, int k, const Where& where, std::string_view what);
/// The text of one lag as parse_lags reads it: "2.5" (k = 1), "1,0" (k = 2).
std::string lag_text(std::span<const double> lag);

}  // namespace ropekit
