// The .npy table writer (reports/npy.hpp): header and records checked byte by byte against values written out by
// hand here; python/tests/test_npy.py reads the command line's files back with numpy.load itself.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "ropekit/core/error.hpp"
#include "reports/npy.hpp"
#include "reports/table.hpp"

using namespace ropekit;

namespace {

// The header text (between the length field and the data) and the data of an .npy file.
struct Parsed {
  int major = 0;
  std::string header, data;
};
Parsed parse(const std::string& b) {
  Parsed p;
  REQUIRE(b.size() >= 10);
  REQUIRE(b.compare(0, 6, "\x93NUMPY") == 0);
  p.major = b[6];
  const std::size_t lead = p.major == 1 ? 10 : 12;
  std::size_t len = 0;
  for (std::size_t k = 0; k < lead - 8; ++k) len |= static_cast<std::size_t>(static_cast<unsigned char>(b[8 + k])) << (8 * k);
  REQUIRE(b.size() >= lead + len);
  CHECK((lead + len) % 64 == 0);  // numpy's alignment of the data
  CHECK(b[lead + len - 1] == '\n');
  p.header = b.substr(lead, len);
  p.data = b.substr(lead + len);
  return p;
}

std::string le(std::uint64_t v, int bytes) {
  std::string s;
  for (int k = 0; k < bytes; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
  return s;
}
std::string f8(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, 8);
  return le(u, 8);
}
std::string S(const std::string& text, std::size_t width) { return text + std::string(width - text.size(), '\0'); }

}  // namespace

TEST_CASE("npy table: field types from the cells, records packed little-endian, empties NaN") {
  Table t;
  t.columns = {"name", "x", "n", "ok", "mixed", "holes", "tag"};
  t.add_row({std::string("a"), 0.5, std::int64_t{3}, true, std::int64_t{2}, 1.5, std::string("π=3")});
  t.add_row({std::string("bcd"), -2.0, std::int64_t{-1}, false, 0.25, Cell{}, 7.0});
  const Parsed p = parse(npy_table_bytes(t));
  CHECK(p.major == 1);
  // text: UTF-8 bytes, as wide as the longest ("π=3" is 4 bytes; the number 7 in a text column is "7").
  CHECK(p.header.find("{'descr': [('name', '|S3'), ('x', '<f8'), ('n', '<i8'), ('ok', '|b1'), ('mixed', '<f8'), "
                      "('holes', '<f8'), ('tag', '|S4')], 'fortran_order': False, 'shape': (2,), }") == 0);
  const std::string row0 = S("a", 3) + f8(0.5) + le(3, 8) + std::string(1, '\1') + f8(2.0) + f8(1.5) + S("π=3", 4);
  const std::string row1 = S("bcd", 3) + f8(-2.0) + le(static_cast<std::uint64_t>(-1), 8) + std::string(1, '\0') +
                           f8(0.25) + f8(std::numeric_limits<double>::quiet_NaN()) + S("7", 4);
  CHECK(p.data == row0 + row1);
}

TEST_CASE("npy table: streamed blocks give the bytes of the whole table, in memory or spilled; no rows is (0,)") {
  Table whole;
  whole.columns = {"lag", "label"};
  NpyTableWriter w(whole.columns), spilled(whole.columns, 1000);  // the second spills past 1000 cells
  for (int b = 0; b < 5; ++b) {
    Table block;
    block.columns = whole.columns;
    for (int r = 0; r < 7000; ++r) {  // 35000 rows: past the writer's read-back chunk (65536 cells / 2 columns)
      const double lag = b * 7000 + r;
      const Cell label = r % 3 ? Cell{std::string(static_cast<std::size_t>(b + 1), 'x')} : Cell{};
      block.add_row({lag, label});
      whole.add_row({lag, label});
    }
    w.add(block);
    spilled.add(block);
  }
  std::string streamed, from_file;
  w.finish([&](std::string_view piece) { streamed += piece; });
  spilled.finish([&](std::string_view piece) { from_file += piece; });
  CHECK(streamed == npy_table_bytes(whole));
  CHECK(from_file == streamed);
  const Parsed p = parse(streamed);
  CHECK(p.header.find("[('lag', '<f8'), ('label', '|S5')]") != std::string::npos);
  CHECK(p.data.size() == 35000 * (8 + 5));
  CHECK(p.data.substr(34999 * 13, 8) == f8(34999));
  CHECK(p.data.substr(34998 * 13 + 8, 5) == S("xxxxx", 5));  // row 34998: block 4, r = 6998 (a label)
  CHECK(p.data.substr(34999 * 13 + 8, 5) == S("", 5));       // row 34999: r = 6999, a multiple of 3 (empty)
  Table empty;
  empty.columns = {"a", "b"};
  const Parsed e = parse(npy_table_bytes(empty));
  CHECK(e.header.find("{'descr': [('a', '<f8'), ('b', '<f8')], 'fortran_order': False, 'shape': (0,), }") == 0);
  CHECK(e.data.empty());
}

TEST_CASE("npy table: quotes in names are escaped, many columns take format 2.0") {
  Table t;
  t.columns = {"it's", "back\\slash"};
  t.add_row({1.0, 2.0});
  CHECK(parse(npy_table_bytes(t)).header.find(R"([('it\'s', '<f8'), ('back\\slash', '<f8')])") != std::string::npos);
  Table wide;
  for (int j = 0; j < 4000; ++j) wide.columns.push_back("column_" + std::to_string(j));  // ~80 KB of descr
  wide.add_row(std::vector<Cell>(4000, Cell{1.0}));
  const Parsed p = parse(npy_table_bytes(wide));
  CHECK(p.major == 2);
  CHECK(p.data.size() == 4000 * 8);
}

TEST_CASE("npy is a format of its own: parse_format reads it, render writes the table's bytes") {
  CHECK(parse_format("npy") == Format::npy);
  CHECK(format_name(Format::npy) == "npy");
  Table t;
  t.columns = {"x"};
  t.add_row({1.0});
  CHECK(render(t, Format::npy) == npy_table_bytes(t));
}

TEST_CASE("npy table: the spilled temporary goes to $TMPDIR, else /tmp (std::tmpfile ignored TMPDIR)") {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ropekit-npy-tmpdir-test";
  Table block;
  block.columns = {"a"};
  for (int r = 0; r < 20; ++r) block.add_row({static_cast<double>(r)});
  // A TMPDIR that does not exist: the spill fails naming it (with /tmp it would have succeeded).
  const std::string missing = "/nonexistent-ropekit-tmpdir";
  ::setenv("TMPDIR", missing.c_str(), 1);
  {
    NpyTableWriter w(block.columns, 4);
    CHECK_THROWS_WITH_AS(w.add(block),
                         ("cannot write a temporary file for the .npy table in '" + missing +
                          "': No such file or directory").c_str(),
                         InputError);
  }
  // An existing TMPDIR: the spill works, and leaves no file behind (the temporary has no name).
  std::filesystem::create_directories(dir);
  ::setenv("TMPDIR", dir.c_str(), 1);
  {
    NpyTableWriter w(block.columns, 4);
    w.add(block);
    std::string bytes;
    w.finish([&](std::string_view piece) { bytes += piece; });
    CHECK(bytes == npy_table_bytes(block));
  }
  CHECK(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
  if (old) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
}
