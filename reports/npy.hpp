#pragma once
// NumPy .npy files (format version 1.0) of a float64 vector, so that Python reads ropekit's numbers with
// numpy.load and no parsing: magic "\x93NUMPY", version 1 0, a little-endian uint16 header length, the header
// dict "{'descr': '<f8', 'fortran_order': False, 'shape': (n,), }" padded with spaces and ended by '\n' so that
// the data starts at a multiple of 64 bytes, then the n values as little-endian IEEE doubles.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include "reports/table.hpp"

namespace ropekit {

/// The whole file's bytes (header and data), little-endian whatever the host's byte order.
std::string npy_bytes(const Eigen::VectorXd& v);

/// Writes npy_bytes(v) with write_file_atomic (reports/output.hpp): all or nothing, never over an input.
/// @throws InputError "cannot write '<path>': <reason>".
void write_npy(const std::string& path, const Eigen::VectorXd& v);

/// A table as a NumPy structured array (`--format npy`): one record per row, one field per column, named as the
/// column and typed from its cells: '<f8' (reals; integers mixed with reals or empty cells; empty cells NaN), '<i8'
/// (integers only), '|b1' (booleans only), '|S<w>' (a column with any text: each cell as CSV writes it, unquoted,
/// in UTF-8, w its longest in bytes, empty cells ""; bytes rather than '<U' whose four bytes a character made a
/// kernel table three times its CSV); a column with empty cells only is '<f8' NaN. numpy.load reads it (no pickle).
/// The header is format 1.0 (2.0 when longer than 65535 bytes, many columns), data at a multiple of 64 bytes.
/// Rows come block by block and wait in memory (16 bytes a cell) up to 64 MiB, then in a temporary file, until
/// finish(): a table of any length is held in memory as its distinct texts and at most 64 MiB of cells.
class NpyTableWriter {
 public:
  /// `held_cells`: cells kept in memory before the temporary file takes them (tests pass a small one).
  explicit NpyTableWriter(std::vector<std::string> columns, std::size_t held_cells = std::size_t{1} << 22);
  ~NpyTableWriter();
  NpyTableWriter(const NpyTableWriter&) = delete;
  NpyTableWriter& operator=(const NpyTableWriter&) = delete;
  /// Adds block's rows (block.columns must be the writer's). @throws InputError if the temporary file fails.
  void add(const Table& block);
  /// The whole file, in pieces of at most a few MB, to `sink`; nothing may be added after.
  void finish(const std::function<void(std::string_view)>& sink);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The .npy bytes of a whole table (NpyTableWriter in one block).
std::string npy_table_bytes(const Table& t);

}  // namespace ropekit
