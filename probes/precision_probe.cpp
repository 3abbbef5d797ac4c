// Built-in probe `precision` (spec precision.md): the heads of Llama 2 7B (plain RoPE, base 1e4) and Llama 3.1 8B
// (llama3 scaling, base 5e5), read from their configs (data/models/, compiled in), through transformers' pipeline in
// fp32, bf16 and fp16 and llama.cpp's (plain RoPE) in fp32: the phase error and the score error at lag 1 against the
// position up to 2^24, the first positions where each passes 1e-3 and 1e-2, and the spec's public numbers.
#include "probes/precision_probe.hpp"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>

#include <fmt/format.h>

#include "reports/output.hpp"
#include "reports/plot.hpp"
#include "reports/table.hpp"
#include "ropekit/core/embedded.hpp"
#include "ropekit/models/hf_config.hpp"
#include "ropekit/precision/first_position.hpp"
#include "ropekit/commands/precision_request.hpp"
#include "ropekit/precision/score.hpp"

namespace ropekit {

namespace {

constexpr double kMaxPosition = 16777216;  // 2^24
constexpr int kPerOctave = 8;              // positions 2^(j/8), rounded, from 1 to 2^24
constexpr std::int64_t kTrials = 64;       // score Monte Carlo per position
constexpr std::uint64_t kSeed = 0;

struct Head {
  std::string name, file;
};
struct Config {
  std::string label;  // "Llama 2 7B, transformers, bf16"
  PrecisionPlan plan;
};

std::vector<double> positions() {
  std::vector<double> out;
  for (int j = 0; j <= 24 * kPerOctave; ++j) {
    const double p = std::round(std::pow(2.0, static_cast<double>(j) / kPerOctave));
    if (out.empty() || p > out.back()) out.push_back(p);
  }
  return out;
}

std::string g3(double v) { return format_significant(v, 3); }
std::string first_cell(const FirstPosition& f) {
  return f.position ? fmt::format("{}", static_cast<std::int64_t>(*f.position)) : std::string("none");
}
// A Monte Carlo answer to the digits its 95% interval leaves, with the interval.
std::string score_cell(FirstPosition f) {
  round_to_interval(f);
  if (!f.position) return "none";
  const auto end = [](std::optional<double> v) { return v ? fmt::format("{}", static_cast<std::int64_t>(*v)) : std::string("beyond"); };
  return fmt::format("{} [{}, {}]", static_cast<std::int64_t>(*f.position), end(f.position_low), end(f.position_high));
}

}  // namespace

ProbeResult run_precision_probe(const ProbeContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::filesystem::path dir(ctx.out_dir);
  std::filesystem::create_directories(dir);
  const std::vector<Head> heads = {{"Llama 2 7B", "data/models/llama-2-7b.json"},
                                   {"Llama 3.1 8B", "data/models/llama-3.1-8b.json"}};
  std::vector<Config> configs;
  for (const auto& h : heads) {
    const Model m = read_hf_config(std::string(embedded_file(h.file)), h.file);
    const Encoding& e = m.layer_types.at(0).encoding;
    for (const Dtype d : {Dtype::fp32, Dtype::bf16, Dtype::fp16}) {
      Pipeline p;
      p.dtype = d;
      configs.push_back({fmt::format("{}, transformers, {}", h.name, dtype_name(d)), plan_precision("probe precision", e, p)});
    }
    if (h.name == "Llama 2 7B") {
      Pipeline g;
      g.kind = PipelineKind::ggml;
      configs.push_back({fmt::format("{}, llama.cpp, fp32", h.name), plan_precision("probe precision", e, g)});
    }
  }
  const auto pos = positions();
  Table data, first;
  data.columns = {"config", "position", "phase_error_max", "inv_freq_part_max", "angle_part_max", "table_error_max",
                  "score_rms_rel_error", "score_max_rel_error"};
  first.columns = {"config", "phase 1e-3", "phase 1e-2", "tables' phase 1e-3", "score RMS 1e-3", "score RMS 1e-2", "phase at 2^20",
                   "score RMS at 2^20", "relativity defect at 2^20"};
  // Every position 0 .. 2^31 - 1 (the score's query, p + 1, too).
  const std::vector<LagStream::Segment> all = {{0, 1, (std::int64_t{1} << 31) - 1}};
  std::vector<PlotSeries> phase_series, score_series;
  for (const auto& c : configs) {
    std::vector<double> phase, score;
    for (const double p : pos) {
      const PhaseErrors e = phase_errors(c.plan, p);
      const ScoreErrors s = score_errors(c.plan, 1, p, kTrials, kSeed);
      phase.push_back(e.phase_error_max);
      score.push_back(s.rms_rel);
      data.add_row({c.label, p, e.phase_error_max, e.inv_freq_part_max, e.angle_part_max, e.table_error_max, s.rms_rel,
                    s.max_rel});
    }
    const auto at20 = static_cast<std::size_t>(std::find(pos.begin(), pos.end(), 1048576.0) - pos.begin());
    first.add_row({c.label, first_cell(first_phase_position(c.plan, all, 1e-3)),
                   first_cell(first_phase_position(c.plan, all, 1e-2)),
                   first_cell(first_phase_position(c.plan, all, 1e-3, PhaseQuantity::table_phase_error_max)),
                   score_cell(first_score_position(c.plan, all, 1e-3, 1, kTrials, kSeed)),
                   score_cell(first_score_position(c.plan, all, 1e-2, 1, kTrials, kSeed)), g3(phase[at20]), g3(score[at20]),
                   g3(score_errors(c.plan, 1, 1048576, kTrials, kSeed).defect_rms)});
    phase_series.push_back({c.label, pos, phase});
    score_series.push_back({c.label, pos, score});
  }

  // The spec's public numbers, recomputed here (precision.md section 3).
  Table pub;
  pub.columns = {"case", "source", "published", "ropekit"};
  const Encoding llama2 = parse_encoding("rope:dim=128,base=1e4");
  Pipeline bf_inv;
  bf_inv.inv_freq_dtype = Dtype::bf16;
  const auto bf_plan = plan_precision("probe precision", llama2, bf_inv);
  pub.add_row({std::string("bf16 inverse frequencies, n 128, B 1e4: phase error (unwrapped) at p = 512 / 2048 / 4096"),
               std::string("Modalities PR #462"), std::string("0.626 / 2.505 / 5.01 rad"),
               fmt::format("{} / {} / {} rad", g3(phase_errors(bf_plan, 512).inv_freq_part_max),
                           format_significant(phase_errors(bf_plan, 2048).inv_freq_part_max, 4),
                           g3(phase_errors(bf_plan, 4096).inv_freq_part_max))});
  Pipeline bf_tables;
  bf_tables.dtype = Dtype::bf16;
  const auto tables_plan = plan_precision("probe precision", llama2, bf_tables);
  double worst = 0;
  for (double p = 0; p < 4096; ++p) worst = std::max(worst, phase_errors(tables_plan, p).table_phase_error_max);
  pub.add_row({std::string("the same with theta in fp32, bf16 cos/sin only: phase the tables carry, p < 4096"),
               std::string("Modalities PR #462"), std::string("2.8e-3 = sqrt(2) 2^-9"), g3(worst)});
  pub.add_row({std::string("fp16 angles, GPT-NeoX (rotary dims 32): emb[1857, 1] in fp32 / fp16"),
               std::string("gpt-neox issue #1003"), std::string("1044.27 / 1045"),
               fmt::format("{} / {}", format_significant(round_to(Dtype::fp32, 1857 * round_to(Dtype::fp32, std::pow(1e4, -2.0 / 32))), 6),
                           format_number(round_to(Dtype::fp16, round_to(Dtype::fp16, 1857) *
                                                                   round_to(Dtype::fp16, std::pow(1e4, -2.0 / 32)))))});
  Pipeline tf;
  tf.dtype = Dtype::tf32;
  pub.add_row({std::string("TF32 angle matmul: position 2049"), std::string("transformers issue #48428"),
               std::string("rounds to 2048"),
               format_number(held_table(plan_precision("probe precision", llama2, tf), 2049)[0].angle)});
  const auto fp32_plan = plan_precision("probe precision", llama2, Pipeline{});
  std::string fp32_cells;
  for (double p : {4095.0, 32767.0, 262143.0, 1048575.0, 9999999.0})
    fp32_cells += (fp32_cells.empty() ? "" : " / ") + g3(phase_errors(fp32_plan, p).phase_error_max);
  pub.add_row({std::string("fp32 transformers path, n 128, B 1e4: phase error at p = 4095 / 32767 / 262143 / 1048575 / 9999999"),
               std::string("precision.md"), std::string("1.37e-4 / 1.70e-3 / 1.44e-2 / 3.07e-2 / 0.632 rad"), fp32_cells});
  pub.add_row({std::string("integers held exactly: bf16 / fp16 / tf32 / fp32"), std::string("IEEE 754, bfloat16, TF32"),
               std::string("256 / 2048 / 2048 / 2^24"),
               fmt::format("{} / {} / {} / {}", round_to(Dtype::bf16, 257) != 257 ? "256" : "?",
                           round_to(Dtype::fp16, 2049) != 2049 ? "2048" : "?", round_to(Dtype::tf32, 2049) != 2049 ? "2048" : "?",
                           round_to(Dtype::fp32, 16777217) != 16777217 ? "2^24" : "?")});

  std::vector<std::string> files;
  for (const auto& [stem, series, ylabel] :
       {std::tuple{std::string("precision-phase"), &phase_series, std::string("max phase error (rad)")},
        std::tuple{std::string("precision-score"), &score_series, std::string("score RMS error / (|q| |k|), lag 1")}}) {
    PlotOptions po;
    po.title = stem == "precision-phase" ? "Phase error of RoPE as frameworks compute it"
                                         : "Score error at lag 1 (64 draws of q, k ~ N(0, I))";
    po.xlabel = "position p";
    po.ylabel = ylabel;
    po.log_x = true;
    po.log_y = true;
    const std::string svg = (dir / (stem + ".svg")).string();
    write_file_atomic(svg, svg_line_plot(*series, po));
    files.push_back(svg);
  }

  std::string md = report_header(
      "Precision: RoPE as frameworks compute it, against the position", ctx.command,
      fmt::format("- heads: Llama 2 7B (rope:dim=128,base=1e4) and Llama 3.1 8B (llama3 scaling, base 5e5), from "
                  "`data/models/`; pipelines: transformers (fp32 inverse frequencies and angles, cos/sin cast to the "
                  "dtype, rotation in the dtype) and llama.cpp (iterated fp32 angles, plain RoPE); {} positions "
                  "2^(j/{}) up to 2^24; score error at lag 1 over {} draws, seed {}\n",
                  pos.size(), kPerOctave, kTrials, kSeed));
  md += "\n## 1. First positions past a tolerance\n\nOver every position 0 .. 2^31 - 1 (`ropekit precision "
        "--tolerance`). Phase: the largest |angle - p theta_exact| over the pairs, wrapped; exact, the first position "
        "past the tolerance (positions a bound on the angle's roundings rules out are skipped, the rest evaluated in "
        "order); the same for the phase the cos/sin tables carry in the dtype (atan2(sin, cos)). Score: the RMS of the "
        "score error at lag 1 relative to |q||k| over the draws, a Monte Carlo curve: its first crossing found at 16 "
        "positions per octave, then by bisection, with its 95% interval [low, high] (the same search on the interval's "
        "ends) and rounded to the digits the interval leaves. Relativity defect: "
        "the RMS of how far the held score at lag 1 moves between positions (2^20 + 1, 2^20) and (1, 0), same draws."
        "\n\n";
  md += to_markdown(first);
  md += "\nPlots: `precision-phase.svg`, `precision-score.svg` (log axes). Data: `precision.csv`.\n";
  md += "\n## 2. Public numbers, recomputed\n\n";
  md += to_markdown(pub);
  const std::string report = (dir / "precision.md").string(), csv = (dir / "precision.csv").string();
  write_file_atomic(csv, to_csv(data));
  write_file_atomic(report, md);
  files.insert(files.begin(), {report, csv});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {files, fmt::format("{} pipelines x {} positions to 2^24: phase and score error in {:.2f} s", configs.size(),
                             pos.size(), seconds)};
}

}  // namespace ropekit
