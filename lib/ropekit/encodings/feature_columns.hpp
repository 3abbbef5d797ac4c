#pragma once
// The feature columns the families share (encoding.hpp `features`): through the fixed-basis evaluator wherever a
// reference method has the same columns, so a reference method name and its family value give identical
// numbers; trigonometric columns of explicit frequency vectors otherwise.

#include <optional>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/basis.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/encodings/method.hpp"

namespace ropekit {

struct Features;

/// BasisParams for a schedule: the geometric grid as the fixed-basis runs write it, or explicit frequencies.
BasisParams basis_params(const FrequencySchedule& f);
/// BasisParams of the shear families (F = 1 unused frequency): L, tau, gamma.
BasisParams shear_params(int L, bool bounded, double gamma = 0);
/// The reference method's columns at the lags' first column.
Features method_features(const Method& m, const BasisParams& p, const Lags& lags);
/// 1, env_i cos(w_i . d), env_i sin(w_i . d), env_i = envelope_base_i^(d / envelope_scale) (none when empty).
Features trig_columns(const Eigen::MatrixXd& w, const Lags& lags, const std::vector<double>& envelope_base,
                      double envelope_scale);
/// f without the columns [first, first + count).
Features drop_columns(Features f, Eigen::Index first, Eigen::Index count);

}  // namespace ropekit
