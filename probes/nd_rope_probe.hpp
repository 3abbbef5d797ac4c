#pragma once
// The nd-rope probe (spec nd-rope.md section 1): the verdict table of the built-in probe over axial, mixed, Cayley /
// exp / Givens-mixed, LieRE-random and proportional generators (the check's own renderings: reports/lie_check_report).

#include "probes/probe.hpp"

namespace ropekit {

/// The built-in probe `nd-rope`: writes nd-rope.md (and nd-rope.csv, the verdict rows) into ctx.out_dir.
ProbeResult run_nd_rope_probe(const ProbeContext& ctx);

}  // namespace ropekit
