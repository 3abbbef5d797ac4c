#include "ropekit/commands/precision_request.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/cancel.hpp"
#include "ropekit/precision/score.hpp"

namespace ropekit {

namespace {

// The last position of a segment.
double last_of(const LagStream::Segment& s) { return s.start + static_cast<double>(s.count - 1) * s.step; }

// Every position of the segments is an integer in range when each segment's ends are and its step is an integer;
// with lags, the queries p + lag too. Returns the largest position.
double check_segments(const Where& where, const std::vector<LagStream::Segment>& segments, double top_lag) {
  double largest = 0;
  for (const auto& s : segments) {
    for (const double p : {s.start, last_of(s)}) {
      check_position(where, p, "positions");
      if (top_lag > 0) check_position(where, p + top_lag, "positions + lags");
      largest = std::max(largest, p);
    }
    if (s.count > 1 && std::floor(s.step) != s.step)
      throw_bad_value(where, "positions", "a step of " + format_number(s.step), "an integer step");
  }
  return largest;
}

// Cells per row of each mode (run.columns' sizes) and what one costs: about 20 characters of text, or 16 bytes in
// memory (the double columns and the arrays they become).
constexpr double kTextBytesPerCell = 20, kMemoryBytesPerCell = 16;

// A direct sum of one rope with nope parts (DeepSeek MLA's decoupled head, partial rotary written as a sum): its rope
// part and the nope dims; none for any other encoding.
std::optional<std::pair<Encoding, int>> rotary_part(const Encoding& e) {
  const auto* sum = std::get_if<enc::DirectSum>(&e.value);
  if (!sum) return std::nullopt;
  std::optional<Encoding> rope;
  int nope = 0;
  for (const Encoding& part : sum->parts) {
    if (std::holds_alternative<enc::Rope>(part.value) && !rope) {
      rope = part;
    } else if (std::holds_alternative<enc::Nope>(part.value)) {
      nope += operator_dim(part);
    } else {
      return std::nullopt;
    }
  }
  if (!rope) return std::nullopt;
  return std::pair{*rope, nope};
}

}  // namespace

PipelineKind model_pipeline(const ModelLayer& model, std::string& why) {
  return model_pipeline(model.model_format, model.model_type, why);
}

PipelineKind model_pipeline(std::string_view format, std::string_view model_type, std::string& why) {
  if (format.starts_with("GGUF")) {
    why = "the model file is a GGUF, run by llama.cpp's ggml rope";
    return PipelineKind::ggml;
  }
  if (model_type == "llama4" || model_type == "llama4_text") {
    why = fmt::format("the config's model_type is {}, run by transformers' Llama 4 rotary code", model_type);
    return PipelineKind::llama4;
  }
  why = "the model file is a config.json, run by transformers' Llama-family rotary code";
  return PipelineKind::huggingface;
}

double precision_seconds(const PrecisionRun& run, double pairs, std::int64_t positions) {
  // Per position and pair: the held stages and the exact angle's reduction, vectorised: measured 8 ns on the
  // reference machine (AVX-512), 2 elements here (40 ns, slower paths covered); with lags, per lag and trial four
  // rotations of the table (the score and the relativity defect) and 2 n roundings, 25 elements a pair.
  const double per_position =
      pairs * (run.lags.empty() ? 2.0 : static_cast<double>(run.lags.size()) * static_cast<double>(run.trials) * 25);
  return static_cast<double>(positions) * per_position / kElementsPerSecond;
}

PrecisionRun plan_precision_request(const PrecisionRequest& r) {
  const Where where = Where::options(r.command);
  PrecisionRun run;
  PlanSource source;
  Pipeline p;
  if (!r.pipeline.empty()) {
    p.kind = parse_pipeline(r.pipeline, where);
  } else if (r.model) {
    std::string why;
    p.kind = model_pipeline(*r.model, why);
    source.pipeline_option = "model";
    run.notes.push_back(fmt::format("pipeline {} ({}; {} to choose another)", pipeline_name(p.kind), why,
                                    where.name("pipeline")));
  }
  p.dtype = parse_dtype(r.dtype, where, "dtype");
  p.inv_freq_dtype = parse_dtype(r.inv_freq_dtype, where, "inv_freq_dtype");
  p.angle_dtype = parse_dtype(r.angle_dtype, where, "angle_dtype");
  if (!pipeline_info(p.kind).held_dtypes_settable && (p.inv_freq_dtype != Dtype::fp32 || p.angle_dtype != Dtype::fp32)) {
    const char* why = "(the others hold fp32 frequencies and angles)";
    if (source.pipeline_option == "pipeline")
      throw_bad_value(where, "pipeline", std::string(pipeline_name(p.kind)),
                      fmt::format("huggingface with inv_freq_dtype or angle_dtype other than fp32 {}", why));
    const bool inv = p.inv_freq_dtype != Dtype::fp32;
    throw_bad_value(where, inv ? "inv_freq_dtype" : "angle_dtype", inv ? r.inv_freq_dtype : r.angle_dtype,
                    fmt::format("fp32 with pipeline {}, which {} implies ({} huggingface for other dtypes {})",
                                pipeline_name(p.kind), where.name("model"), where.name("pipeline"), why));
  }
  check_pipeline_dtype(where, p, source);
  if (r.seq_len && !(*r.seq_len > 0 && std::isfinite(*r.seq_len)))
    throw_bad_value(where, "seq_len", format_number(*r.seq_len), "finite and > 0");
  if (r.model) {
    source.encoding_option = "model";
    source.given = r.model->brief.empty() ? r.model->label : r.model->brief;
  } else if (r.encoding.empty()) {
    throw_bad_value(where, "encoding", "none", "given (or --model)");
  }
  // The model's encoding as its reader built it; an encoding given as such, parsed.
  Encoding e = r.model && r.model->value ? *r.model->value
               : r.model                 ? parse_encoding(r.model->encoding, Where(r.command + ": --model"))
                                         : parse_encoding(r.encoding, Where(r.command + ": --encoding"));
  // A rope with nope parts: the rope part's pairs are the only ones a pipeline rounds.
  if (const auto part = rotary_part(e)) {
    run.notes.push_back(fmt::format("the encoding is a direct sum: its rope part ({} dims) is analysed; its {} nope "
                                    "dims carry no rotation and are held exactly, so no row counts them (score errors "
                                    "are relative to |q||k| over the rotated dims)",
                                    operator_dim(part->first), part->second));
    e = part->first;
  }
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
    run.columns = {"quantity", "lag", "tolerance", "first_position", "first_position_low", "first_position_high",
                   "value", "positions_evaluated", "search", "note"};
  } else if (!r.lags.empty()) {
    run.columns = {"lag", "position", "score_rms_rel_error", "score_max_rel_error", "relativity_defect_rms"};
  } else {
    run.columns = r.table ? std::vector<std::string>{"position", "i", "inv_freq", "angle", "cos", "sin"}
                          : std::vector<std::string>{"position", "phase_error_max", "inv_freq_part_max",
                                                     "angle_part_max", "table_error_max", "table_phase_error_max"};
  }

  // The positions, then the run's size from the spelling's (its pairs; proportional RoPE's identity pairs included)
  // and the positions' count: refused before the frequencies, a row or a block is allocated.
  const double top_lag = r.lags.empty() ? 0 : *std::max_element(r.lags.begin(), r.lags.end());
  run.positions = r.positions ? *r.positions
                              : std::vector<LagStream::Segment>{
                                    {0, 1, (std::int64_t{1} << 31) - static_cast<std::int64_t>(top_lag)}};
  const double largest = check_segments(where, run.positions, top_lag);
  for (const auto& s : run.positions) run.count += s.count;
  const double pairs = std::max(1.0, encoding_size(e).n / 2);
  // A phase search evaluates at most every position; a score search about 16 per octave and a bisection per segment
  // and interval end (32 octaves at most): the time of that many rows.
  const std::int64_t evaluated = std::max<std::int64_t>(
      1, !run.tolerance || r.lags.empty()
             ? run.count
             : std::min<std::int64_t>(run.count, static_cast<std::int64_t>(run.positions.size()) * 700));
  const double rows = run.tolerance ? 0 : static_cast<double>(run.count) *
                                              (run.table ? pairs : std::max<double>(1, static_cast<double>(r.lags.size())));
  const auto cost = [&](std::int64_t n) {
    Cost c;
    c.seconds = precision_seconds(run, pairs, n);
    if (r.in_memory) c.bytes = rows * static_cast<double>(n) / static_cast<double>(evaluated) *
                               static_cast<double>(run.columns.size()) * kMemoryBytesPerCell;
    return c;
  };
  const std::string for_what = fmt::format("of {} pairs{}", pairs, run.table ? " with --table" : "");
  if (!cost(evaluated).fits())
    check_cost(where, "positions", fmt::format("{} positions", run.count), cost(evaluated),
               fmt::format("{} positions", largest_fitting(1, evaluated, [&](std::int64_t n) { return cost(n).fits(); })),
               for_what);
  const double per_position = run.count ? rows / static_cast<double>(run.count) : 0;
  const double text_bytes = rows * static_cast<double>(run.columns.size()) * kTextBytesPerCell;
  if (!r.in_memory && text_bytes > kMaxOutputBytes)
    throw_bad_value(where, "positions", fmt::format("{} positions", run.count),
                    fmt::format("at most {} positions {}: the rows would take about {} of text, over the output cap "
                                "of {}", std::floor(kMaxOutputBytes / (per_position * static_cast<double>(run.columns.size()) *
                                                                        kTextBytesPerCell)),
                                for_what, format_bytes(text_bytes), format_bytes(kMaxOutputBytes)));

  run.plan = plan_precision(r.command, e, p, r.seq_len, source);
  // Angles past their dtype's range round to inf (fp16: 65504): refused with the bound rather than printed as NaN.
  const double finite = largest_finite_position(run.plan);
  if (r.positions && largest + top_lag > finite) {
    const bool tf32 = p.dtype == Dtype::tf32 || p.angle_dtype == Dtype::tf32;
    const std::string angle_dtype(dtype_name(tf32 ? Dtype::tf32 : p.angle_dtype));
    throw_bad_value(where, top_lag > 0 ? "positions + lags" : "positions", format_number(largest + top_lag),
                    fmt::format("at most {}: the largest position whose {} angles of this encoding are finite",
                                format_number(finite), angle_dtype));
  }
  if (!r.positions && run.positions.front().count - 1 > finite - top_lag) {
    run.positions.front().count = static_cast<std::int64_t>(finite - top_lag) + 1;  // the default: up to the bound
    run.count = run.positions.front().count;
  }
  return run;
}

void round_to_interval(FirstPosition& f) {
  if (!f.position || !f.position_low || !f.position_high) return;
  const double half = (*f.position_high - *f.position_low) / 2;
  if (!(half >= 1)) return;
  const double unit = std::pow(10.0, std::floor(std::log10(half)));
  f.position = std::round(*f.position / unit) * unit;
  f.position_low = std::floor(*f.position_low / unit) * unit;
  f.position_high = std::ceil(*f.position_high / unit) * unit;
}

std::vector<FirstPosition> precision_first_positions(const PrecisionRun& run) {
  std::vector<FirstPosition> out;
  if (!run.lags.empty()) {
    for (const double lag : run.lags) {
      out.push_back(first_score_position(run.plan, run.positions, *run.tolerance, lag, run.trials, run.seed));
      round_to_interval(out.back());
    }
    return out;
  }
  for (const PhaseQuantity q :
       {PhaseQuantity::phase_error_max, PhaseQuantity::table_phase_error_max, PhaseQuantity::table_error_max}) {
    out.push_back(first_phase_position(run.plan, run.positions, *run.tolerance, q));
    // At position 0 the tables hold cos 0 = 1 times the attention factor: their whole error there is that factor's
    // rounding (fl32, then the table dtype).
    const Dtype table = table_dtype(run.plan.pipeline);
    const double held = round_to(table, run.plan.held_attention_factor), a = run.plan.attention_factor;
    if (q == PhaseQuantity::table_error_max && out.back().position == 0.0 && held != a)
      out.back().note = fmt::format("at position 0 the error is the attention factor's rounding: {} held as {} in {}",
                                    format_number(a), format_number(held), dtype_name(table));
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
      if (k % 64 == 0) check_cancelled();
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
