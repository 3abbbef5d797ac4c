#include "reports/model_tables.hpp"

#include <fmt/format.h>

namespace ropekit {

Table model_summary_table() {
  Table t;
  t.columns = {"model",      "layer_type",        "layers",         "head_dim",   "rotary_dims", "base",
               "scheme",     "window",            "context",        "visible_lags", "pairs",     "turns_within_orig",
               "turns_within_context", "min_kernel", "min_kernel_lag", "first_negative_lag", "men_base_bound",
               "base_at_or_above_bound", "attention_factor", "softmax_scale"};
  return t;
}

void add_summary_row(Table& t, const std::string& model, const LayerReport& r) {
  const LayerType& l = r.layer;
  std::vector<Cell> row{model, l.name, static_cast<std::int64_t>(l.layers), static_cast<std::int64_t>(l.head_dim),
                        static_cast<std::int64_t>(l.rotary_dims)};
  const double V = static_cast<double>(r.visible_lags);
  if (!r.rotary) {
    row.insert(row.end(), {Cell(), r.family, window_text(l.window), r.context, V, Cell(), Cell(), Cell(),
                           r.family == "nope" ? Cell(1.0) : Cell(), Cell(), Cell(), Cell(), Cell(), l.attention_factor,
                           l.softmax_scale});
  } else {
    row.insert(row.end(),
               {r.base ? Cell(*r.base) : Cell(), r.scheme, window_text(l.window), r.context, V, r.pairs, r.turns_within_orig, r.turns_within_context,
                r.min_kernel, static_cast<double>(r.min_kernel_lag),
                r.first_negative_lag ? Cell(static_cast<double>(*r.first_negative_lag)) : Cell(),
                r.base_bound ? Cell(*r.base_bound) : Cell(), r.base_bound && r.base ? Cell(*r.base >= *r.base_bound) : Cell(),
                l.attention_factor, l.softmax_scale});
  }
  t.add_row(row);
}

Table model_kernels_table() {
  Table t;
  t.columns = {"model", "layer_type"};
  for (double l : model_report_table_lags()) t.columns.push_back(fmt::format("Phi({})", static_cast<std::int64_t>(l)));
  return t;
}

void add_kernels_row(Table& t, const std::string& model, const LayerReport& r) {
  std::vector<Cell> row{model, r.layer.name};
  for (const auto& v : r.table_kernel)
    row.push_back(!v ? Cell() : r.rotary ? Cell(format_significant(*v, 4)) : Cell(std::string("1")));
  t.add_row(row);
}

}  // namespace ropekit
