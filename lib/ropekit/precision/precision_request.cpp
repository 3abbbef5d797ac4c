#include "ropekit/precision/precision_request.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/cancel.hpp"
#include "ropekit/precision/score.hpp"

namespace ropekit {

PrecisionRun plan_precision_request(const PrecisionRequest& r) {
  const Where where = Where::options(r.command);
  Pipeline p;
  p.kind = parse_pipeline(r.pipeline, where);
  p.dtype = parse_dtype(r.dtype, where, "dtype");
  p.inv_freq_dtype = parse_dtype(r.inv_freq_dtype, where, "inv_freq_dtype");
  p.angle_dtype = parse_dtype(r.angle_dtype, where, "angle_dtype");
  if (p.kind != PipelineKind::huggingface && (p.inv_freq_dtype != Dtype::fp32 || p.angle_dtype != Dtype::fp32))
    throw_bad_value(where, "pipeline", std::string(pipeline_name(p.kind)),
                    "huggingface with inv_freq_dtype or angle_dtype other than fp32 (the others hold fp32 frequencies "
                    "and angles)");
  if (r.seq_len && !(*r.seq_len > 0 && std::isfinite(*r.seq_len)))
    throw_bad_value(where, "seq_len", format_number(*r.seq_len), "finite and > 0");
  if (r.encoding.empty()) throw_bad_value(where, "encoding", "none", "given (or --model)");
  const Encoding e = parse_encoding(r.encoding, Where(r.command + ": --encoding"));
  PrecisionRun run;
  run.plan = plan_precision(r.command, e, p, r.seq_len);
  run.table = r.table;
  if (!r.lags.empty() && r.table) throw_bad_value(where, "table", "given with lags", "one of --table and --lags");
  if (!(r.trials >= 1 && r.trials <= (std::int64_t{1} << 30)))
    throw_bad_value(where, "trials", std::to_string(r.trials), "an integer in [1, 2^30]");
  for (const double lag : r.lags) check_position(where, lag, "lags");  // integer offsets >= 0 of the query
  run.lags = r.lags;
  run.trials = r.trials;
  run.seed = r.seed;
  if (r.tolerance) {
    if (!(*r.tolerance > 0 && std::isfinite(*r.tolerance)))
      throw_bad_value(where, "tolerance", format_number(*r.tolerance), "finite and > 0");
    if (r.table) throw_bad_value(where, "table", "given with tolerance", "one of --table and --tolerance");
    run.tolerance = r.tolerance;
    run.columns = {"quantity", "lag", "tolerance", "first_position", "value", "positions_evaluated", "search"};
    return run;
  }
  if (!r.lags.empty()) {
    run.columns = {"lag", "position", "score_rms_rel_error", "score_max_rel_error", "relativity_defect_rms"};
    return run;
  }
  run.columns = r.table ? std::vector<std::string>{"position", "i", "inv_freq", "angle", "cos", "sin"}
                        : std::vector<std::string>{"position", "phase_error_max", "inv_freq_part_max", "angle_part_max",
                                                   "table_error_max", "table_phase_error_max"};
  return run;
}

void check_precision_positions(const PrecisionRun& run, const std::string& command, const double* positions,
                               std::size_t n) {
  const double top = run.lags.empty() ? 0 : *std::max_element(run.lags.begin(), run.lags.end());
  for (std::size_t i = 0; i < n; ++i) {
    check_position(Where::options(command), positions[i], "positions");
    if (top > 0) check_position(Where::options(command), positions[i] + top, "positions + lags");  // the query's
  }
}

double precision_seconds(const PrecisionRun& run, std::int64_t positions) {
  // Per position and pair: the held stages and the exact angle's reduction, vectorised: measured 8 ns on the
  // reference machine (AVX-512), 2 elements here (40 ns, slower paths covered); with lags, per lag and trial four
  // rotations of the table (the score and the relativity defect) and 2 n roundings, 25 elements a pair.
  const double pairs = static_cast<double>(run.plan.theta_held.size()) *
                       (run.lags.empty() ? 2.0 : static_cast<double>(run.lags.size()) * static_cast<double>(run.trials) * 25);
  return static_cast<double>(positions) * pairs / kElementsPerSecond;
}

void check_precision_budget(const PrecisionRun& run, const std::string& command, std::int64_t positions) {
  const auto cost = [&](std::int64_t n) {
    Cost c;
    c.seconds = precision_seconds(run, n);
    return c;  // rows are streamed: no memory beyond a block
  };
  if (cost(positions).fits()) return;
  check_cost(Where::options(command), "positions", fmt::format("{} positions", positions), cost(positions),
             fmt::format("{} positions", largest_fitting(1, positions, [&](std::int64_t n) { return cost(n).fits(); })),
             fmt::format("of {} pairs", run.plan.theta_held.size()));
}

std::vector<FirstPosition> precision_first_positions(const PrecisionRun& run, const std::string& command,
                                                     const std::vector<LagStream::Segment>& positions) {
  // Every position of a segment is an integer in range when its ends are and its step is an integer.
  std::int64_t count = 0;
  for (const auto& s : positions) {
    const double last = s.start + static_cast<double>(s.count - 1) * s.step;
    check_precision_positions(run, command, &s.start, 1);
    check_precision_positions(run, command, &last, 1);
    if (s.count > 1 && std::floor(s.step) != s.step)
      throw_bad_value(Where::options(command), "positions", "a step of " + format_number(s.step), "an integer step");
    count += s.count;
  }
  // The phase search evaluates at most every position; the score search about 16 per octave and a bisection per
  // segment (32 octaves at most): the budget of that many rows.
  if (run.lags.empty()) {
    check_precision_budget(run, command, count);
  } else {
    check_precision_budget(run, command, std::min<std::int64_t>(count, static_cast<std::int64_t>(positions.size()) * 600));
  }
  std::vector<FirstPosition> out;
  if (run.lags.empty()) {
    out.push_back(first_phase_position(run.plan, positions, *run.tolerance));
  } else {
    for (const double lag : run.lags)
      out.push_back(first_score_position(run.plan, positions, *run.tolerance, lag, run.trials, run.seed));
  }
  return out;
}

std::vector<std::vector<double>> precision_rows(const PrecisionRun& run, const double* positions, std::size_t n) {
  std::vector<std::vector<double>> cols(run.columns.size());
  HeldArrays held;
  for (std::size_t k = 0; k < n; ++k) {
    if (k % 4096 == 0) check_cancelled();
    const double p = positions[k];
    if (!run.lags.empty()) {
      for (const double lag : run.lags) {
        const ScoreErrors e = score_errors(run.plan, lag, p, run.trials, run.seed);
        cols[0].push_back(lag);
        cols[1].push_back(p);
        cols[2].push_back(e.rms_rel);
        cols[3].push_back(e.max_rel);
        cols[4].push_back(e.defect_rms);
      }
    } else if (run.table) {
      fill_held(run.plan, p, held);  // the arrays reused across positions
      for (std::size_t i = 0; i < held.angle.size(); ++i) {
        cols[0].push_back(p);
        cols[1].push_back(static_cast<double>(i));
        cols[2].push_back(run.plan.theta_held[i]);
        cols[3].push_back(held.angle[i]);
        cols[4].push_back(held.cos[i]);
        cols[5].push_back(held.sin[i]);
      }
    } else {
      const PhaseErrors e = phase_errors(run.plan, p);
      for (const auto& [j, v] : {std::pair{0, p}, std::pair{1, e.phase_error_max}, std::pair{2, e.inv_freq_part_max},
                                 std::pair{3, e.angle_part_max}, std::pair{4, e.table_error_max},
                                 std::pair{5, e.table_phase_error_max}})
        cols[static_cast<std::size_t>(j)].push_back(v);
    }
  }
  return cols;
}

}  // namespace ropekit
