#pragma once
// Which basis fits each target best at each evaluation length: fit's rows reduced to one row per (target,
// context), the methods ranked by their eval MSE averaged over seeds (`ropekit fit --summary`, ropekit.fit(...,
// summary=True)).

#include <string>
#include <vector>

#include "ropekit/fit/fit_run.hpp"

namespace ropekit {

struct FitSummaryRow {
  std::string target;
  int context = 0;                 ///< an evaluation length T
  std::string best, runner_up;     ///< the two lowest mean MSEs (runner_up "" with one method)
  double best_mse = 0, runner_up_mse = 0;  ///< mean over seeds; runner_up_mse NaN with one method
  int methods = 0;                 ///< methods compared
  int seeds = 0;                   ///< seeds averaged
  /// How many times the best's MSE the runner-up's is (NaN with one method).
  double ratio() const { return runner_up_mse / best_mse; }
};

/// One row per (target, eval context) in the rows' order of first appearance; ties go to the method that came
/// first. Train rows are left out (the training length is an eval context too). A row of a model's layer type
/// (FitRow::layer_type) counts as the basis "<layer type>: <method>".
std::vector<FitSummaryRow> summarize_fit(const std::vector<FitRow>& rows);

}  // namespace ropekit
