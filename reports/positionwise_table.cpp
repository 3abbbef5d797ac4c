// Position-wise Jordan rows (lie/jordan_positionwise.hpp) as a table: `ropekit lie positionwise` and the
// jordan-positionwise probe print the same columns.
#include "reports/positionwise_table.hpp"

#include <cstdint>
#include <string>

namespace ropekit {

Table positionwise_table(const std::vector<PositionwiseRow>& rows) {
  Table t;
  t.columns = {"variant",      "m",         "window",           "factorization",  "center",
               "gamma",        "eta",       "max_query_factor", "max_key_factor", "cancellation",
               "relativity_defect", "rounding_bound", "f32_score_error", "f32_lag_error", "group_law_defect",
               "pairs"};
  for (const auto& r : rows)
    t.add_row({std::string(to_string(r.variant)), std::int64_t{r.m}, std::int64_t{r.window},
               std::string(to_string(r.factorization)), r.center, r.gamma, r.eta, r.max_query_factor, r.max_key_factor,
               r.cancellation, r.relativity_defect, r.rounding_bound, r.f32_score_error, r.f32_lag_error,
               r.group_law_defect, r.pairs});
  return t;
}

}  // namespace ropekit
