#pragma once
// The jordan-positionwise probe (spec nd-rope.md section 2; Jordan-RoPE paper Prop. 1 and appendix A):
// dynamic range and float32 score error of the position-wise factorization, plain and centred, for the
// raw, scaled-exact and stabilized blocks, and the stabilized block's relativity defect.

#include <vector>

#include "probes/probe.hpp"
#include "reports/table.hpp"
#include "ropekit/lie/jordan_positionwise.hpp"

namespace ropekit {

/// Columns: variant,m,window,factorization,center,gamma,eta,max_query_factor,max_key_factor,cancellation,
/// relativity_defect,rounding_bound,f32_score_error,group_law_defect,pairs.
Table positionwise_table(const std::vector<PositionwiseRow>& rows);

/// The built-in probe `jordan-positionwise`: writes jordan-positionwise.md and .csv into ctx.out_dir.
ProbeResult run_jordan_positionwise_probe(const ProbeContext& ctx);

}  // namespace ropekit
