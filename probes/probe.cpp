#include "probes/probe.hpp"

#include <fmt/format.h>

#include "probes/jordan_positionwise_probe.hpp"
#include "probes/jordan_tables.hpp"
#include "probes/models_probe.hpp"
#include "probes/rf_rope_probe.hpp"
#include "probes/scaling_probe.hpp"
#include "probes/tuning_probe.hpp"
#include "probes/nd_rope_probe.hpp"
#include "probes/precision_probe.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/version.hpp"

namespace ropekit {

const std::vector<ProbeInfo>& builtin_probes() {
  static const std::vector<ProbeInfo> probes = {
      {"jordan-table3", "Jordan-RoPE Table 3: phase / linear / mixed targets, MSE at length 8192", run_jordan_table3},
      {"jordan-table11", "Jordan-RoPE Tables 11 and 4: structured targets, MSE at 8192 and the best method of each",
       run_jordan_table11},
      {"jordan-tables6-16", "Jordan-RoPE Tables 6 and 16: high-order jet targets, R^2 at 8192 by Jordan order",
       run_jordan_tables6_16},
      {"rf-rope", "RF-RoPE: every spectral family's kernel, Thm 2 / Prop 4 by Monte Carlo, power, erratum, convergence", run_rf_rope_probe, 13},
      {"nd-rope", "N-D RoPE: skew, commuting, independent, relativity and reversibility verdicts per generator family",
       run_nd_rope_probe, 4},
      {"jordan-positionwise", "Position-wise Jordan-RoPE: Prop. 1 in float64, largest factors and float32 score error "
       "(appendix A), stabilized defect", run_jordan_positionwise_probe, 5},
      {"scaling", "Context scaling of a 4k RoPE to 32k and 128k: PI, NTK, dynamic NTK, YaRN, LongRoPE, Llama 3.1 "
       "frequencies, kernels and fixed-basis fits", run_scaling_probe, 10},
      {"tuning", "Table 3's RoPE, damped RoPE and Jordan-RoPE bases tuned vs fixed at 1024..8192: does tuning "
       "change the paper's conclusions?", run_tuning_probe, 25},
      {"models", "14 public checkpoints layer type by layer type: kernels over the lags each sees, wavelength coverage, "
       "Men et al.'s base bound, framework notes", run_models_probe, 6},
      {"precision", "RoPE as frameworks compute it: Llama 2 / 3.1 heads in fp32, bf16, fp16 (transformers, llama.cpp), "
       "phase and score error to position 2^24, exact first positions past 1e-3 and 1e-2 over all 2^31, the "
       "relativity defect, the spec's public numbers",
       run_precision_probe, 4},
  };
  return probes;
}

const ProbeInfo& find_probe(const std::string& name) {
  std::string known;
  for (const auto& p : builtin_probes()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw InputError(fmt::format("probe = {} (must be one of {})", quote(name), known));
}

std::string report_header(const std::string& title, const std::string& command, const std::string& details) {
  return fmt::format("# {}\n\n- ropekit {}\n- command: `{}`\n{}\n", title, kVersion, command, details);
}

}  // namespace ropekit
