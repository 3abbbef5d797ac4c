#pragma once
// Built-in probe `tuning` (issue 8): the RoPE, damped RoPE and Stabilized Jordan-RoPE bases of the Jordan-RoPE
// paper's Table 3, fixed (the paper's) and tuned to each target (fit/param_fit.hpp tune_encoding: the training
// objective min_w |X(p) w - y|^2 + ridge |w|^2 on lags 0..L-1, minimised over the free parameters p), scored
// at 1024..8192 as `ropekit fit` scores them (spec fixed-basis.md section 4).

#include <cstdint>
#include <string>
#include <vector>

#include "probes/probe.hpp"
#include "reports/table.hpp"
#include "ropekit/fit/encoding_score.hpp"
#include "ropekit/fit/param_fit.hpp"

namespace ropekit {

/// One Table 3 basis: its row label in the paper, the reference method it equals, its spelling and free names.
struct TuningEncodingSpec {
  std::string label, method, spelling;
  std::vector<std::string> free;
};
/// RoPE (theta), Damped RoPE (theta, gamma), Stabilized Jordan-RoPE (theta, gamma, eta), in the paper's row order.
const std::vector<TuningEncodingSpec>& tuning_encodings();

/// Which fits to run and how hard to tune; the defaults are `ropekit fit-params`' (about 20 s on 2 busy cores).
struct TuningSettings {
  std::vector<std::string> methods = {"rope", "damped_rope", "jordan_rope"};  ///< a subset of tuning_encodings()
  std::vector<std::string> targets = {"phase", "linear", "mixed"};
  int starts = TuneOptions{}.starts;                  ///< untuned, periodogram, then seeded perturbations (3)
  int max_iterations = TuneOptions{}.max_iterations;  ///< per start (200; the winning starts converge within 120)
  std::uint64_t seed = TuneOptions{}.seed;            ///< of the perturbed starts (1)
  int threads = 0;           ///< fits in parallel (<= 0: every hardware thread); results do not depend on it
};

/// The Table 3 setting (configs/paper-table3-toy.yaml).
struct TuningSetup {
  static constexpr int kHeadDim = 64, kNumFreqs = 16, kTrainContext = 1024, kFreqIndex = 3;
  static constexpr double kBase = 1e4, kGamma = 1e-4, kRidge = 1e-4;
  static const std::vector<int>& eval_contexts();  ///< 1024, 2048, 4096, 8192
};

struct TuningFit {
  TuningEncodingSpec encoding;
  std::string target;
  TuneResult tune;                    ///< objective untuned -> tuned, tuned parameters, starts
  std::vector<EncodingScore> fixed;   ///< score_encoding of the untuned basis: the train row, then each context
  std::vector<EncodingScore> tuned;   ///< the same for the tuned basis
};

/// One fit per (method, target), in the order methods x targets.
/// @throws InputError for a method that is not one of tuning_encodings() or an unknown target.
std::vector<TuningFit> run_tuning_fits(const TuningSettings& settings);

/// The report (Markdown, report_header first): setting, tables, tuned parameters, conclusions from the numbers.
/// Deterministic: no run time in it (the summary line has that).
std::string tuning_report(const std::vector<TuningFit>& fits, const TuningSettings& settings,
                          const std::string& command);

/// One row per (fit, fixed/tuned, context), full precision, with the full spelling of each basis.
Table tuning_rows(const std::vector<TuningFit>& fits);

/// Writes tuning.md and tuning.csv into ctx.out_dir.
ProbeResult run_tuning_probe(const ProbeContext& ctx);

}  // namespace ropekit
