#pragma once
// A measured or tabulated kernel: rows (lag, value) from a CSV file with the header `lag,value`
// (`fit-params --target data:FILE.csv`, `fit-params --spectrum ... --kernel-data FILE.csv`), or any table ropekit
// writes with a `lag` column (`ropekit kernel`'s CSV: FILE.csv#column=kernel,encoding=SPELLING picks the column and
// the rows).

#include <string>
#include <string_view>

#include <Eigen/Dense>

namespace ropekit {

/// The largest |value| a table may hold: the fits square and sum the values over up to 2^20 rows (and more in
/// their normal equations), which stays finite below 1e100 (issue 20 item 12: 1e308 printed NaN and inf).
inline constexpr double kMaxTableValue = 1e100;

struct KernelTable {
  Eigen::VectorXd lag;    ///< strictly increasing, finite, >= 0
  Eigen::VectorXd value;  ///< finite, |value| <= kMaxTableValue
  std::string source;     ///< the file
};

/// Which column and rows of a wider table: `column` ("" : `value`, else `kernel`), and rows whose `encoding` cell is
/// `encoding` ("" : every row, which must then hold one encoding only).
struct TableSelect {
  std::string column, encoding;
};

/// Parses the text of a table: a header line `lag,value` (spaces around fields allowed), then one row of two
/// numbers per line; blank lines and lines starting with '#' are skipped. A header with more columns (RFC 4180
/// quoting, as ropekit's CSV) is read through `select`: the lag column and the chosen one; a row whose chosen cell
/// is empty (a lag a layer's window masks) is left out.
/// @throws InputError "<where>: <source> line N: ..." for a missing header, a row that is not two finite numbers
/// (values at most kMaxTableValue in magnitude),
/// lags that are negative or not strictly increasing, or no rows.
KernelTable parse_kernel_table(std::string_view text, std::string_view source, std::string_view where,
                               const TableSelect& select = {});
/// Reads and parses FILE, or FILE#column=NAME,encoding=SPELLING (the selection; the spelling as the table writes
/// it, the text after `encoding=` to the end). @throws InputError if unreadable or malformed.
KernelTable read_kernel_table(const std::string& path, std::string_view where);

}  // namespace ropekit
