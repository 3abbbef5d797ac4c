#pragma once
// The nd-rope probe and the renderings of a Lie check (spec nd-rope.md section 1): JSON and Markdown
// for `ropekit lie check`, and the verdict table of the built-in probe over axial, mixed, Cayley / exp /
// Givens-mixed, LieRE-random and proportional generators.

#include <string>

#include "probes/probe.hpp"
#include "reports/table.hpp"
#include "ropekit/lie/lie.hpp"

namespace ropekit {

/// Every number of the check, the tolerances and the verdicts (top-level booleans skew, commuting,
/// independent, relativity, reversibility; orthogonal when there is a Q). Non-finite numbers are null.
std::string lie_check_json(const LieCheck& c, const std::string& source);

/// A Markdown report: the verdict table (property, verdict, measured, threshold) and how it was measured.
std::string lie_check_markdown(const LieCheck& c, const std::string& source);

/// The built-in probe `nd-rope`: writes nd-rope.md (and nd-rope.csv, the verdict rows) into ctx.out_dir.
ProbeResult run_nd_rope_probe(const ProbeContext& ctx);

}  // namespace ropekit
