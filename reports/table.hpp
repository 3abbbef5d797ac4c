#pragma once
// A table of results and its writers: CSV (full precision, for machines), Markdown (for reading and
// for papers' supplementary material), JSON (array of row objects) and LaTeX (booktabs tabular).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ropekit/core/error.hpp"  // format_significant, which reports use with tables

namespace ropekit {

/// Empty, text, real, integer or boolean. Reals print shortest round-trip in CSV/JSON.
using Cell = std::variant<std::monostate, std::string, double, std::int64_t, bool>;

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  ///< each row has columns.size() cells

  Table& add_row(std::vector<Cell> row);
  /// Index of a column by name; throws std::out_of_range if absent.
  std::size_t column(std::string_view name) const;
};

enum class Format { csv, md, json, latex, npy };

/// Parses "csv", "md" (or "markdown"), "json", "latex" (or "tex"), "npy" (a NumPy structured array: reports/npy.hpp,
/// binary). @throws InputError otherwise.
Format parse_format(std::string_view name);
/// The format's name: "csv", "md", "json", "latex" or "npy" (what parse_format reads back).
std::string_view format_name(Format format);

struct MarkdownOptions {
  int significant_digits = 6;  ///< reals are printed with this many significant digits
};

std::string to_csv(const Table& t);
/// One cell as to_csv writes it (a number's shortest round-trip text; text quoted where it needs it).
std::string csv_text(const Cell& c);
std::string to_markdown(const Table& t, const MarkdownOptions& options = {});
std::string to_json(const Table& t);
std::string to_latex(const Table& t, const MarkdownOptions& options = {});
std::string render(const Table& t, Format format);

/// A table too long to hold, written block by block to an OutputStream (output.hpp): the bytes are exactly
/// render() of the whole table. Nothing lands unless finish() is called (stdout excepted).
class TableStream {
 public:
  TableStream(const std::string& path, Format format, std::vector<std::string> columns);
  ~TableStream();
  /// Writes block's rows (block.columns must be this stream's).
  void add(const Table& block);
  /// Writes the end of the table and lands the file.
  void finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Reads CSV text with a header line (RFC 4180 quoting). Cells stay text.
struct CsvData {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};
/// @throws InputError on a ragged row or an unterminated quote; `source` names the file in messages.
CsvData parse_csv(std::string_view text, std::string_view source);

}  // namespace ropekit
