#pragma once
// `ropekit precision` and ropekit.precision as one library request (the front ends bind options to it): an
// encoding, a pipeline (precision/pipeline.hpp) and positions; per position either the phase errors or, with
// `table`, what the framework holds per rotated pair (inverse frequency, angle, cos, sin).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ropekit/core/lags.hpp"
#include "ropekit/precision/first_position.hpp"
#include "ropekit/precision/pipeline.hpp"

namespace ropekit {

struct PrecisionRequest {
  std::string command = "ropekit precision";  ///< names every refusal
  std::string encoding;                        ///< a spelling (rope family)
  std::string dtype = "fp32", pipeline = "huggingface", inv_freq_dtype = "fp32", angle_dtype = "fp32";
  bool table = false;
  std::optional<double> seq_len;
  std::vector<double> lags;  ///< given: score errors per (lag, position) instead of phase errors (score.hpp)
  std::int64_t trials = 64;  ///< Monte Carlo draws of q, k per (lag, position)
  std::uint64_t seed = 0;
  std::optional<double> tolerance;  ///< given: the first position past it (first_position.hpp) instead of rows
};

/// The validated request: its plan and the names of its columns.
struct PrecisionRun {
  PrecisionPlan plan;
  bool table = false;
  std::vector<double> lags;
  std::int64_t trials = 0;
  std::uint64_t seed = 0;
  std::optional<double> tolerance;
  std::vector<std::string> columns;  ///< table: position,i,inv_freq,angle,cos,sin; else position and the errors
};
/// @throws InputError naming the command and the option (dtype, pipeline, encoding, ...).
PrecisionRun plan_precision_request(const PrecisionRequest& r);

/// Refuses positions that are not integers in [0, 2^31 - 1], and a count whose rows would exceed the time budget
/// (announcing one past a few seconds on stderr when `announce_to` is true). Call before any output.
void check_precision_positions(const PrecisionRun& run, const std::string& command, const double* positions,
                               std::size_t n);
void check_precision_budget(const PrecisionRun& run, const std::string& command, std::int64_t positions);
/// The estimated run time (an upper bound on a slow machine) of `positions` positions.
double precision_seconds(const PrecisionRun& run, std::int64_t positions);

/// With a tolerance: the first position past it, of the phase error or (with lags) of each lag's score error, over
/// the positions' segments (rows in run.columns: quantity,lag,tolerance,first_position,value,positions_evaluated,
/// search). Checks the segments' positions (their ends and steps) and the budget first.
std::vector<FirstPosition> precision_first_positions(const PrecisionRun& run, const std::string& command,
                                                     const std::vector<LagStream::Segment>& positions);

/// Rows for n positions (with lags: every lag at each position), column by column (run.columns' order), as doubles.
std::vector<std::vector<double>> precision_rows(const PrecisionRun& run, const double* positions, std::size_t n);

}  // namespace ropekit
