#pragma once
// Position-wise Jordan rows (spec nd-rope.md section 2) as a table, for `ropekit lie positionwise` and the probe.

#include <vector>

#include "reports/table.hpp"
#include "ropekit/lie/jordan_positionwise.hpp"

namespace ropekit {

/// Columns: variant,m,window,factorization,center,gamma,eta,max_query_factor,max_key_factor,cancellation,
/// relativity_defect,rounding_bound,f32_score_error,f32_lag_error,group_law_defect,pairs.
Table positionwise_table(const std::vector<PositionwiseRow>& rows);

}  // namespace ropekit
