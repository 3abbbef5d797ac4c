#pragma once
// The printed cells of the Jordan-RoPE paper's Tables 3, 6, 11 and 16 with their float64 answers
// (data/paper-fixed-basis-cells.csv, compiled in), and how a cell is read off a run's rows.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/fit/fit_run.hpp"

namespace ropekit {

struct PaperCell {
  int table = 0;
  std::string row, column;   ///< as printed in the paper
  std::string method;        ///< a method name, or "max(m1 m2 ...)" for a best-of column
  std::string target;
  std::string metric;        ///< "mse@T" or "r2@T"
  std::string paper;         ///< the printed value, as text (as stored: 0.000 is "0.0")
  double paper_value = 0;    ///< the same as a number
  double oracle_f64 = 0;     ///< an independent float64 implementation's answer
  bool paper_matches_f64 = true;  ///< false: the printed value is a float32 artefact of the reference
};

/// All cells, in the data file's order.
const std::vector<PaperCell>& paper_cells();
std::vector<PaperCell> parse_paper_cells(std::string_view csv_text, std::string_view source);

/// The cell for (table, method, target, metric), if the paper printed one.
const PaperCell* find_paper_cell(int table, std::string_view method, std::string_view target, std::string_view metric);

/// The metric ("mse@T" / "r2@T") of (method, target) averaged over the rows' seeds; for a method
/// "max(a b ...)" the largest over the listed methods. @throws std::out_of_range if no row matches.
double metric_value(const std::vector<FitRow>& rows, std::string_view method, std::string_view target,
                    std::string_view metric);

/// Methods listed by "max(a b c)", or {method} for a plain name.
std::vector<std::string> methods_of(std::string_view method);

}  // namespace ropekit
