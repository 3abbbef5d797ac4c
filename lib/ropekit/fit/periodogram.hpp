#pragma once
// The periodogram's peaks of a target kernel: the frequency starts of fit-params' tuning (param_fit.cpp), kept out
// of the Ceres module because they need no solver.

#include <vector>

#include <Eigen/Dense>

namespace ropekit {

/// The largest local maxima of the periodogram |sum_d (y_d - mean y) e^{-i w d}|^2 over w in (0, pi] on a grid
/// of at most 4096 frequencies (4 per 2 pi / span), strongest first, at most `count` of them, each at least
/// 1e-2 of the strongest (Hann-windowed, so side lobes stay below that). Used as starts: a far-off initial grid still finds the target's basin.
std::vector<double> periodogram_peaks(const Eigen::VectorXd& lags, const Eigen::VectorXd& y, int count);

}  // namespace ropekit
