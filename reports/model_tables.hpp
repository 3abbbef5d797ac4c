#pragma once
// The models report's tables (`ropekit probe models`, `ropekit report`): a summary row and a kernels-at-selected-lags
// row per layer type, from the library's numbers (lib/ropekit/commands/model_report.hpp).

#include <string>

#include "reports/table.hpp"
#include "ropekit/commands/model_report.hpp"

namespace ropekit {

/// Columns: model, layer_type, layers, head_dim, rotary_dims, base, scheme, window, context, visible_lags, pairs,
/// turns_within_orig, turns_within_context, min_kernel, min_kernel_lag, first_negative_lag, men_base_bound,
/// base_at_or_above_bound, attention_factor, softmax_scale (blank where a NoPE layer has none).
Table model_summary_table();
void add_summary_row(Table& t, const std::string& model, const LayerReport& r);

/// Columns: model, layer_type, Phi(<lag>) per model_report_table_lags() (4 significant digits; blank past the
/// visible lags; "1" for a NoPE layer).
Table model_kernels_table();
void add_kernels_row(Table& t, const std::string& model, const LayerReport& r);

}  // namespace ropekit
