#pragma once
// The one-dimensional global scan of tune_encoding (param_fit.hpp) and its notes on the starts' agreement: Ceres-free,
// so they live outside the module's one file (fit/param_fit.cpp), which calls them.

#include <functional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/fit/param_fit.hpp"
#include "ropekit/fit/tunable.hpp"

namespace ropekit {

/// A global scan of a one-dimensional frequency map (base, factor or a spectrum's scale; issue 20 item 6): from 64
/// log-spaced points on [lower, upper], intervals whose frequencies move more than pi/4 of phase at the largest lag,
/// max_k |theta_k(a) - theta_k(b)| max|d|, are split at their geometric midpoint (8 points per period of the fastest
/// cosine, so every basin the lags resolve holds a grid point), up to kScanPoints points.
/// Returns `count` starting points (fewer only on a smaller grid): the grid's local minima of c(p), lowest first,
/// then its lowest other points. `points` gets the grid's size; tick(done, points) is called every 64 points.
std::vector<double> scan_minima(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                                double ridge, int count, int& points, const std::function<void(int, int)>& tick);

/// Notes on a one-dimensional tuning: which starts ended (at `ends`) in other minima than the best, and whether the
/// best is separated from them (its objective at least 1e-6 relative below theirs).
std::vector<std::string> agreement_notes(const TuneResult& r, const std::vector<double>& ends);

}  // namespace ropekit
