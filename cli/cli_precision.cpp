// ropekit precision: what a framework's RoPE pipeline holds (inverse frequencies, angles, cos/sin tables in its
// dtypes) and how far its phase lands from the exact encoding, per position (lib/ropekit/precision/).
#include <algorithm>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "reports/output.hpp"
#include "reports/progress.hpp"
#include "reports/table.hpp"
#include "ropekit/core/budget.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/commands/precision_request.hpp"

namespace ropekit {

namespace {

constexpr const char* kDefaultPositions = "0,1,4095,32767,262143,1048575,9999999";

struct PrecisionArgs {
  PrecisionRequest request;
  std::vector<std::string> models;
  std::string positions, lags, format, out;  // positions "": the default; format "": csv, or npy for --out FILE.npy
};

void run_precision(PrecisionArgs& a) {
  const std::string& command = a.request.command;
  const Format format = parse_table_format_option(command, a.format, a.out);
  check_output_path(a.out);
  a.request.model = take_model_encoding(command, a.models, a.request.encoding);
  if (!a.lags.empty()) {
    const Lags lags = parse_lags(a.lags, 1, Where::options(command), "--lags");
    a.request.lags.assign(lags.data(), lags.data() + lags.rows());
  }
  // The positions are counted, never expanded, before the request is sized and checked (no row before that).
  // Not given: kDefaultPositions, or with --tolerance every position (up to where the angles stay finite).
  LagStream positions(a.positions.empty() ? kDefaultPositions : a.positions, Where::options(command), "--positions");
  if (!a.positions.empty() || !a.request.tolerance) a.request.positions = positions.segments();
  const PrecisionRun run = plan_precision_request(a.request);
  for (const auto& note : run.notes) std::cerr << command << ": note: " << note << "\n";
  const double pairs = static_cast<double>(run.plan.theta_held.size());
  if (run.tolerance) {
    const auto found = precision_first_positions(run);
    Table t;
    t.columns = run.columns;
    const auto optional_int = [](std::optional<double> v) { return v ? Cell(static_cast<std::int64_t>(*v)) : Cell(); };
    for (const FirstPosition& f : found)
      t.add_row({f.quantity, optional_int(f.lag), f.tolerance, optional_int(f.position), optional_int(f.position_low),
                 optional_int(f.position_high), f.value, f.evaluated, f.search, f.note});
    emit(a.out, render(t, format));
    return;
  }
  announce(command, fmt::format("{} positions of {} pairs", positions.count(), pairs),
           precision_seconds(run, pairs, positions.count()));
  TableStream out(a.out, format, run.columns);
  // Blocks of about 2^16 rows: a table of many pairs holds a few positions at a time.
  const double rows_per_position = run.table ? pairs : std::max<double>(1, static_cast<double>(run.lags.size()));
  std::vector<double> block(static_cast<std::size_t>(std::clamp(65536 / rows_per_position, 1.0, 16384.0)));
  for (std::size_t n; (n = positions.next(block.data(), block.size())) > 0;) {
    const auto cols = precision_rows(run, block.data(), n);
    Table t;
    t.columns = run.columns;
    for (std::size_t r = 0; r < cols[0].size(); ++r) {
      std::vector<Cell> row;
      for (std::size_t c = 0; c < cols.size(); ++c) {
        const bool integer = c == 0 || ((run.table || !run.lags.empty()) && c == 1);
        row.push_back(integer ? Cell(static_cast<std::int64_t>(cols[c][r])) : Cell(cols[c][r]));
      }
      t.add_row(std::move(row));
    }
    out.add(t);
  }
  out.finish();
}

}  // namespace

void add_precision_command(CLI::App& app, const CliContext&) {
  auto a = std::make_shared<PrecisionArgs>();
  auto* c = app.add_subcommand(
      "precision", "What a framework's RoPE pipeline holds in fp32, tf32, bf16 or fp16 (inverse frequencies, angles, "
                   "cos/sin tables) and its phase error against the exact encoding, per position");
  auto* enc = c->add_option("--encoding", a->request.encoding, "a rope encoding, e.g. rope:dim=128,base=1e4 (see "
                                                                "`ropekit list encodings`)");
  add_model_option(c, a->models, false)->excludes(enc);
  c->add_option("--dtype", a->request.dtype,
                "the model dtype the cos/sin tables are cast to: fp32, bf16, fp16; tf32: fp32 tables with the angle "
                "computed by a TF32 matmul (both factors rounded to tf32)")
      ->capture_default_str();
  c->add_option("--pipeline", a->request.pipeline,
                "huggingface (transformers' Llama-family rotary module: fp32 inv_freq from the scheme's fp32 code, "
                "angle fl32(p theta), tables fl32(cos) cast to the dtype), ggml (llama.cpp's CPU rope cache: "
                "iterated fp32 products theta *= powf(base, -2/r), then rope_yarn in fp32 with the C library's cosf / "
                "sinf; plain, partial, linear, yarn; fp32 or fp16 tensors), ggml-fma (ggml with rope_yarn's sums "
                "contracted to FMAs, as GCC builds it at -march=native), llama4 (transformers' Llama 4: fp32 complex "
                "freqs_cis, never cast, complex products in fp32 stored in the dtype), vllm or flash (tables as "
                "huggingface, the rotation in fp32 registers, stored in the dtype). Default: huggingface, or with "
                "--model the one its file implies (a GGUF: ggml; model_type llama4: llama4; any other config.json: "
                "huggingface), said in a note; `ropekit list pipelines` shows each row");
  c->add_option("--inv-freq-dtype", a->request.inv_freq_dtype,
                "huggingface: the dtype inv_freq is held in (bf16: a buffer cast with the model)")
      ->capture_default_str();
  c->add_option("--angle-dtype", a->request.angle_dtype,
                "huggingface: the dtype of the angle product fl(fl(p) fl(theta)) (fp16: angles computed in half precision)")
      ->capture_default_str();
  c->add_option("--positions", a->positions,
                fmt::format("positions p: integers in [0, 2^31 - 1], list or start:stop[:step] (default: {}; with "
                            "--tolerance every position, up to the last whose angles are finite in their dtype)",
                            kDefaultPositions));
  add_real_option(c, "ropekit precision", "--seq-len", a->request.seq_len,
                  "current sequence length for dynamic and longrope schemes");
  c->add_option("--lags", a->lags,
                "score errors instead of phase errors: per lag and position, the error of <rot(q, p + lag), rot(k, p)> "
                "as the pipeline computes it (content rounded to the dtype, rotation in the dtype, fp32 sum) against "
                "the exact rotation of the same content, relative to |q||k|, over q, k ~ N(0, I): columns "
                "lag,position,score_rms_rel_error,score_max_rel_error,relativity_defect_rms (the RMS of how far the held "
                "score moves when the same q, k sit at lag and 0 instead; lags: integers >= 0)");
  add_integer_option(c, "ropekit precision", "--trials", a->request.trials, "Monte Carlo draws per lag and position",
                     1, std::int64_t{1} << 30)
      ->capture_default_str();
  add_seed_option(c, "ropekit precision", "--seed", a->request.seed, "seed of the content draws")->capture_default_str();
  add_real_option(c, "ropekit precision", "--tolerance", a->request.tolerance,
                  "instead of rows: the first position of --positions where phase_error_max (the angle's), "
                  "table_phase_error_max and table_error_max (the tables' in --dtype) exceed this, or with --lags each "
                  "lag's score_rms_rel_error; phase and tables: exact, positions a bound rules out are skipped; score: "
                  "16 positions per octave, then bisection, with the 95% interval of the Monte Carlo answer and the "
                  "answer rounded to the digits it leaves. Columns quantity,lag,tolerance,first_position,"
                  "first_position_low,first_position_high,value,positions_evaluated,search,note (first_position empty: "
                  "not exceeded)");
  c->add_flag("--table", a->request.table,
              "rows position,i,inv_freq,angle,cos,sin per rotated pair, each value as the framework holds it (read "
              "back exactly); without it one row per position: phase_error_max (|angle - p theta_exact| wrapped to "
              "[-pi, pi]), its parts inv_freq_part_max (|p (theta_held - theta_exact)|, unwrapped) and "
              "angle_part_max, table_error_max and table_phase_error_max (the phase atan2(sin, cos) carries)");
  c->add_option("--format", a->format, kTableFormatHelp);
  c->add_option("--out", a->out, "output file (default: stdout); written only if the run succeeds");
  c->callback([a] { run_precision(*a); });
}

}  // namespace ropekit
