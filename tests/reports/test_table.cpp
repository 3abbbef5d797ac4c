// Report writers: CSV round-trips exactly, JSON parses, Markdown and LaTeX escape their specials.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "reports/table.hpp"
#include "ropekit/core/error.hpp"
#include "tests/support.hpp"

using namespace ropekit;

namespace {
Table sample() {
  Table t;
  t.columns = {"name", "value", "n", "ok"};
  t.add_row({std::string("a,b \"q\""), 0.1 + 0.2, std::int64_t{42}, true});
  t.add_row({std::string("x_1 | y^2 & 50%"), 1.9048322303826847e-14, std::int64_t{-1}, false});
  t.add_row({Cell{}, std::nan(""), std::int64_t{0}, true});
  return t;
}
}  // namespace

TEST_CASE("CSV quotes what needs quoting and reals round-trip exactly") {
  const Table t = sample();
  const CsvData back = parse_csv(to_csv(t), "t");
  REQUIRE(back.columns == t.columns);
  REQUIRE(back.rows.size() == 3);
  CHECK(back.rows[0][0] == "a,b \"q\"");
  CHECK(std::stod(back.rows[0][1]) == 0.1 + 0.2);
  CHECK(std::stod(back.rows[1][1]) == 1.9048322303826847e-14);
  CHECK(back.rows[2][1] == "nan");
}

TEST_CASE("CSV cells as RFC 4180 writes them: quoted when they hold a comma, quote or line break, quotes doubled") {
  // Written out by hand: quotes at either end, two in a row, a line break, and text that needs no quotes.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain", "plain"},
      {"a,b", "\"a,b\""},
      {"\"q\"", "\"\"\"q\"\"\""},
      {"x\"\"y", "\"x\"\"\"\"y\""},
      {"line\nbreak", "\"line\nbreak\""},
      {"rope:dim=8,scaling=yarn(factor=4,orig=64)", "\"rope:dim=8,scaling=yarn(factor=4,orig=64)\""},
  };
  for (const auto& [cell, written] : cases) {
    CAPTURE(cell);
    CHECK(csv_text(Cell{cell}) == written);
  }
}

TEST_CASE("JSON is valid - one object per row - NaN becomes null") {
  const auto j = nlohmann::json::parse(to_json(sample()));
  REQUIRE(j.is_array());
  CHECK(j[0]["value"].get<double>() == 0.1 + 0.2);
  CHECK(j[0]["n"].get<int>() == 42);
  CHECK(j[0]["ok"].get<bool>());
  CHECK(j[2]["value"].is_null());
  CHECK(j[2]["name"].is_null());
}

TEST_CASE("Markdown escapes pipes - LaTeX escapes its specials") {
  const std::string md = to_markdown(sample());
  CHECK(md.find("x_1 \\| y^2") != std::string::npos);
  CHECK(md.find("| name | value | n | ok |") == 0);
  const std::string tex = to_latex(sample());
  CHECK(tex.find("x\\_1 | y\\^{}2 \\& 50\\%") != std::string::npos);
  CHECK(tex.find("\\toprule") != std::string::npos);
  Table u;
  u.columns = {"Jordan (γ=0)"};
  u.add_row({std::string("50.463 †")});
  const std::string utex = to_latex(u);
  CHECK(utex.find("Jordan ($\\gamma$=0)") != std::string::npos);
  CHECK(utex.find("50.463 \\textsuperscript{\\dag}") != std::string::npos);
}

TEST_CASE("format_significant keeps the requested significant digits") {
  CHECK(format_significant(17.61797631, 4) == "17.62");
  CHECK(format_significant(0.05411961409, 4) == "0.05412");
  CHECK(format_significant(1.904832226e-14, 4) == "1.905e-14");
  CHECK(format_significant(0.0, 4) == "0");
  CHECK(format_significant(18711.3, 4) == "18711");
  CHECK(format_significant(1.0, 6) == "1");
  CHECK(format_significant(9.5101, 4) == "9.51");
}

TEST_CASE("formats parse - ragged CSV and unknown formats are rejected") {
  CHECK(parse_format("md") == Format::md);
  CHECK(parse_format("latex") == Format::latex);
  CHECK_THROWS_AS(parse_format("xml"), InputError);
  CHECK_THROWS_AS(parse_csv("a,b\n1,2,3\n", "r.csv"), InputError);
  CHECK_THROWS_AS(parse_csv("a,b\n\"1,2\n", "r.csv"), InputError);
  CHECK_THROWS_AS(parse_csv("", "r.csv"), InputError);
}

TEST_CASE("a TableStream writes exactly render() of the whole table, for any block size and format") {
  Table whole;
  whole.columns = {"name", "x", "n", "ok"};
  for (int i = 0; i < 23; ++i)
    whole.add_row({std::string(i % 3 ? "a" : "b,|&\"c"), 0.1 * i, std::int64_t{i}, i % 2 == 0});
  ropekit::test::ScratchDir dir("table-stream");
  for (Format f : {Format::csv, Format::md, Format::json, Format::latex}) {
    for (std::size_t block : {std::size_t{1}, std::size_t{5}, std::size_t{23}, std::size_t{100}}) {
      CAPTURE(static_cast<int>(f));
      CAPTURE(block);
      const std::string path = dir.file("t.out");
      TableStream s(path, f, whole.columns);
      for (std::size_t first = 0; first < whole.rows.size(); first += block) {
        Table part{whole.columns, {}};
        for (std::size_t i = first; i < std::min(first + block, whole.rows.size()); ++i) part.rows.push_back(whole.rows[i]);
        s.add(part);
        s.add(Table{whole.columns, {}});  // an empty block adds nothing
      }
      s.finish();
      CHECK(ropekit::test::slurp(path) == render(whole, f));
    }
    const std::string empty = dir.file("e.out");  // no rows at all: the empty table
    TableStream s(empty, f, whole.columns);
    s.finish();
    CHECK(ropekit::test::slurp(empty) == render(Table{whole.columns, {}}, f));
  }
}
