#include "probes/paper_cells.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "reports/table.hpp"
#include "ropekit/core/embedded.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

std::vector<PaperCell> parse_paper_cells(std::string_view csv_text, std::string_view source) {
  const CsvData csv = parse_csv(csv_text, source);
  const auto col = [&](std::string_view n) {
    for (std::size_t i = 0; i < csv.columns.size(); ++i)
      if (csv.columns[i] == n) return i;
    throw InputError(fmt::format("{}: no column '{}'", source, n));
  };
  const auto c_table = col("table"), c_row = col("row"), c_col = col("column"), c_method = col("method"),
             c_target = col("target"), c_metric = col("metric"), c_paper = col("paper"), c_oracle = col("oracle_f64"),
             c_match = col("paper_matches_f64");
  std::vector<PaperCell> cells;
  for (const auto& r : csv.rows) {
    PaperCell c;
    c.table = static_cast<int>(parse_int(r[c_table]).value_or(0));
    c.row = r[c_row];
    c.column = r[c_col];
    c.method = r[c_method];
    c.target = r[c_target];
    c.metric = r[c_metric];
    c.paper = r[c_paper];
    const auto v = parse_double(r[c_oracle]), printed = parse_double(c.paper);
    if (!v || !printed || c.table == 0)
      throw InputError(fmt::format("{}: bad row for '{}' / '{}'", source, c.row, c.column));
    c.oracle_f64 = *v;
    c.paper_value = *printed;
    c.paper_matches_f64 = r[c_match] == "yes";
    cells.push_back(std::move(c));
  }
  return cells;
}

const std::vector<PaperCell>& paper_cells() {
  static const std::vector<PaperCell> cells =
      parse_paper_cells(embedded_file("data/paper-fixed-basis-cells.csv"), "data/paper-fixed-basis-cells.csv");
  return cells;
}

const PaperCell* find_paper_cell(int table, std::string_view method, std::string_view target, std::string_view metric) {
  for (const auto& c : paper_cells())
    if (c.table == table && c.method == method && c.target == target && c.metric == metric) return &c;
  return nullptr;
}

std::vector<std::string> methods_of(std::string_view method) {
  if (method.rfind("max(", 0) != 0 || method.back() != ')') return {std::string(method)};
  std::istringstream in(std::string(method.substr(4, method.size() - 5)));
  std::vector<std::string> out;
  for (std::string m; in >> m;) out.push_back(m);
  return out;
}

double metric_value(const std::vector<FitRow>& rows, std::string_view method, std::string_view target,
                    std::string_view metric) {
  const auto at = metric.find('@');
  const std::string_view kind = metric.substr(0, at);
  const int context = at == std::string_view::npos ? 0 : static_cast<int>(parse_int(metric.substr(at + 1)).value_or(0));
  if ((kind != "mse" && kind != "r2") || context <= 0)
    throw std::out_of_range(fmt::format("metric '{}' (must be mse@T or r2@T)", metric));
  const auto methods = methods_of(method);
  if (kind == "mse" && methods.size() > 1)
    throw std::out_of_range(fmt::format("'{}': a best-of column is defined for r2 only", method));
  double best = -std::numeric_limits<double>::infinity();
  for (const auto& m : methods) {
    double sum = 0;
    int n = 0;
    for (const auto& r : rows)
      if (r.split == "eval" && r.context == context && r.method == m && r.target == target) {
        sum += kind == "mse" ? r.mse : r.r2;
        ++n;
      }
    if (n == 0) throw std::out_of_range(fmt::format("no rows for method '{}', target '{}', {}", m, target, metric));
    best = std::max(best, sum / n);
  }
  return best;
}

}  // namespace ropekit
