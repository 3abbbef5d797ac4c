#pragma once
// Fixed-basis result rows (FitRow, ropekit/fit/fit_run.hpp) as a table, and read back from CSV.

#include <string_view>
#include <vector>

#include "reports/table.hpp"
#include "ropekit/fit/fit_run.hpp"
#include "ropekit/fit/fit_summary.hpp"

namespace ropekit {

/// Columns: seed,target,method,context,split,n_features,n_train,mse,r2,cond,rank; `layer_types` (a run of a
/// model's layer types): layer_type first.
Table fit_rows_table(const std::vector<FitRow>& rows, bool layer_types = false);

/// Columns: target,context,best,best_mse,runner_up,runner_up_mse,ratio (runner_up_mse / best_mse),methods,seeds;
/// empty cells where there is no runner-up.
Table fit_summary_table(const std::vector<FitSummaryRow>& rows);

/// Reads rows back from CSV (ropekit's own, or the reference's `task`/`benchmark` spelling of the
/// target column; missing optional columns stay 0). @throws InputError on a missing column or bad number.
std::vector<FitRow> read_fit_rows(const CsvData& csv, std::string_view source);

}  // namespace ropekit
