#include "reports/fit_rows.hpp"

#include <initializer_list>
#include <optional>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

Table fit_rows_table(const std::vector<FitRow>& rows, bool layer_types) {
  Table t;
  t.columns = {"seed", "target", "method", "context", "split", "n_features", "n_train", "mse", "r2", "cond", "rank"};
  if (layer_types) t.columns.insert(t.columns.begin(), "layer_type");
  for (const auto& r : rows) {
    std::vector<Cell> row = {r.seed, r.target, r.method, std::int64_t{r.context}, r.split, std::int64_t{r.n_features},
                             std::int64_t{r.n_train}, r.mse, r.r2, r.cond, std::int64_t{r.rank}};
    if (layer_types) row.insert(row.begin(), r.layer_type.empty() ? Cell() : Cell(r.layer_type));
    t.add_row(std::move(row));
  }
  return t;
}

std::vector<FitRow> read_fit_rows(const CsvData& csv, std::string_view source) {
  auto find = [&](std::initializer_list<std::string_view> names, bool required) -> std::optional<std::size_t> {
    for (auto n : names)
      for (std::size_t i = 0; i < csv.columns.size(); ++i)
        if (csv.columns[i] == n) return i;
    if (required)
      throw InputError(fmt::format("{}: no column '{}' (must have seed, target/task/benchmark, method, context, "
                                   "split, mse)",
                                   source, *names.begin()));
    return std::nullopt;
  };
  const auto c_seed = find({"seed"}, true), c_target = find({"target", "task", "benchmark"}, true),
             c_method = find({"method"}, true), c_context = find({"context"}, true), c_split = find({"split"}, true),
             c_mse = find({"mse"}, true);
  const auto c_r2 = find({"r2"}, false), c_nf = find({"n_features"}, false), c_nt = find({"n_train"}, false),
             c_cond = find({"cond"}, false), c_rank = find({"rank"}, false);
  std::vector<FitRow> rows;
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    const auto& cells = csv.rows[r];
    auto num = [&](std::size_t col) {
      auto v = parse_double(cells[col]);
      if (!v) throw_bad_value(fmt::format("{} row {}", source, r + 2), csv.columns[col], "'" + cells[col] + "'", "a number");
      return *v;
    };
    auto integer = [&](std::size_t col) {
      auto v = parse_int(cells[col]);
      if (!v) throw_bad_value(fmt::format("{} row {}", source, r + 2), csv.columns[col], "'" + cells[col] + "'", "an integer");
      return *v;
    };
    FitRow row;
    row.seed = integer(*c_seed);
    row.target = cells[*c_target];
    row.method = cells[*c_method];
    row.context = static_cast<int>(integer(*c_context));
    row.split = cells[*c_split];
    row.mse = num(*c_mse);
    if (c_r2 && !cells[*c_r2].empty()) row.r2 = num(*c_r2);
    if (c_nf) row.n_features = static_cast<int>(integer(*c_nf));
    if (c_nt) row.n_train = static_cast<int>(integer(*c_nt));
    if (c_cond) row.cond = num(*c_cond);
    if (c_rank) row.rank = static_cast<int>(integer(*c_rank));
    rows.push_back(std::move(row));
  }
  return rows;
}

Table fit_summary_table(const std::vector<FitSummaryRow>& rows) {
  Table t;
  t.columns = {"target", "context", "best", "best_mse", "runner_up", "runner_up_mse", "ratio", "methods", "seeds"};
  for (const FitSummaryRow& r : rows) {
    const bool second = !r.runner_up.empty();
    t.add_row({r.target, std::int64_t{r.context}, r.best, r.best_mse, second ? Cell{r.runner_up} : Cell{},
               second ? Cell{r.runner_up_mse} : Cell{}, second ? Cell{r.ratio()} : Cell{},
               std::int64_t{r.methods}, std::int64_t{r.seeds}});
  }
  return t;
}

}  // namespace ropekit
