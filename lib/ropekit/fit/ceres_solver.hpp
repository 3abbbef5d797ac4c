#pragma once
// The Levenberg-Marquardt options both Ceres fits use (param_fit.cpp, spectral_param_fit.cpp): the Ceres module's
// own header, included by its files only (tests/layout_rules.sh).

#include <ceres/ceres.h>

namespace ropekit {

inline ceres::Solver::Options solver_options(int max_iterations) {
  ceres::Solver::Options o;
  o.minimizer_type = ceres::TRUST_REGION;
  o.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  o.linear_solver_type = ceres::DENSE_QR;
  o.max_num_iterations = max_iterations;
  // Tight tolerances: recovery tests ask for 1e-6 relative parameters, which needs the cost at rounding level.
  o.function_tolerance = 1e-15;
  o.gradient_tolerance = 1e-16;
  o.parameter_tolerance = 1e-15;
  o.num_threads = 1;
  o.logging_type = ceres::SILENT;
  o.minimizer_progress_to_stdout = false;
  return o;
}

}  // namespace ropekit
