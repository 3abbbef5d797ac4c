#pragma once
// Built-in probe `rf-rope`: Monte Carlo verification of RF-RoPE's Theorem 2, Proposition 4 and
// Theorem 6 for every spectral family, the power check, the Cauchy erratum, convergence in D,
// sampling schemes and deterministic RoPE's continuum kernel (spec rf-rope.md).

#include "probes/probe.hpp"

namespace ropekit {

/// Writes rf-rope.md, rf-rope-verify.csv and rf-rope-convergence.csv into ctx.out_dir.
ProbeResult run_rf_rope_probe(const ProbeContext& ctx);

}  // namespace ropekit
