#pragma once
// `ropekit precision` and ropekit.precision as one library request (the front ends bind options to it): an
// encoding, a pipeline (precision/pipeline.hpp) and positions; per position either the phase errors or, with
// `table`, what the framework holds per rotated pair (inverse frequency, angle, cos, sin). Given a model and no
// pipeline, the pipeline its file implies (model_pipeline); a direct sum of a rope with nope parts is analysed on
// its rope part (the nope dims carry no rotation: held exactly).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/core/lags.hpp"
#include "ropekit/models/model_layers.hpp"
#include "ropekit/precision/first_position.hpp"
#include "ropekit/precision/pipeline.hpp"

namespace ropekit {

struct PrecisionRequest {
  std::string command = "ropekit precision";  ///< names every refusal
  std::string encoding;                        ///< a spelling (rope family), or empty with `model`
  std::optional<ModelLayer> model;             ///< the model layer type taken instead (refusals name --model)
  /// A name of pipelines(); empty: the one the model file implies (model_pipeline), huggingface without a model.
  std::string pipeline;
  std::string dtype = "fp32", inv_freq_dtype = "fp32", angle_dtype = "fp32";
  bool table = false;
  std::optional<double> seq_len;
  std::vector<double> lags;  ///< given: score errors per (lag, position) instead of phase errors (score.hpp)
  std::int64_t trials = 64;  ///< Monte Carlo draws of q, k per (lag, position)
  std::uint64_t seed = 0;
  std::optional<double> tolerance;  ///< given: the first position past it (first_position.hpp) instead of rows
  /// The positions as segments (a number: count 1, core/lags.hpp), never expanded here; none: every position whose
  /// query p + lag is one and whose angles are finite (what a tolerance searches by default).
  std::optional<std::vector<LagStream::Segment>> positions;
  /// The rows are returned in memory (Python): sized against the memory budget; otherwise they are streamed as text,
  /// sized against kMaxOutputBytes (core/budget.hpp).
  bool in_memory = false;
};

/// The validated request: its plan, its positions and the names of its columns.
struct PrecisionRun {
  PrecisionPlan plan;
  bool table = false;
  std::vector<double> lags;
  std::int64_t trials = 0;
  std::uint64_t seed = 0;
  std::optional<double> tolerance;
  std::vector<LagStream::Segment> positions;  ///< as given, or the default range filled in
  std::int64_t count = 0;                     ///< positions in them
  std::vector<std::string> columns;  ///< table: position,i,inv_freq,angle,cos,sin; else position and the errors
  /// Without the "<command>: note: " head: the pipeline a model implied, the nope dims of a direct sum left out.
  std::vector<std::string> notes;
};

/// The pipeline a model file implies: a GGUF (format "GGUF ...") runs in llama.cpp's ggml; a config.json with
/// model_type llama4 / llama4_text in transformers' Llama 4 code; any other config.json in transformers' Llama-family
/// code. `why` says which, in a few words ("the model file is a GGUF, run by llama.cpp's ggml rope").
PipelineKind model_pipeline(const ModelLayer& model, std::string& why);
/// The same from a model's format ("GGUF v3", "config.json ...") and model_type.
PipelineKind model_pipeline(std::string_view format, std::string_view model_type, std::string& why);
/// Checks every option and position (integers in [0, 2^31 - 1], p + lag too, and at most the largest position
/// whose angles are finite: fp16 angles overflow past 65504), then the run's time and size from the spelling's
/// sizes (its pairs and the positions' count) before anything is allocated, then plans it.
/// @throws InputError naming the command and the option (dtype, pipeline, encoding, positions, ...).
PrecisionRun plan_precision_request(const PrecisionRequest& r);

/// The estimated run time (an upper bound on a slow machine) of `positions` positions of `pairs` pairs.
double precision_seconds(const PrecisionRun& run, double pairs, std::int64_t positions);

/// With a tolerance: the first position past it, of each phase quantity (phase_error_max, table_phase_error_max,
/// table_error_max) or with lags of each lag's score error, over run.positions (rows in run.columns: quantity,lag,
/// tolerance,first_position,first_position_low,first_position_high,value,positions_evaluated,search,note). A score
/// answer is rounded to the digits its 95% interval leaves (see round_to_interval); a note says when a table error
/// found at position 0 is the attention factor's rounding into the table dtype.
std::vector<FirstPosition> precision_first_positions(const PrecisionRun& run);

/// A Monte Carlo answer to the digits it has: the unit of the leading digit of its interval's half-width, the answer
/// rounded to it and the ends rounded outward (1301850 in [1250122, 1347001] -> 1300000 in [1250000, 1350000]).
/// Unchanged without both ends.
void round_to_interval(FirstPosition& f);

/// Rows for n positions (with lags: every lag at each position), column by column (run.columns' order), as doubles.
std::vector<std::vector<double>> precision_rows(const PrecisionRun& run, const double* positions, std::size_t n);

}  // namespace ropekit
