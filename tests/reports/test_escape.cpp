// Hostile text into SVG and Markdown (issue 32 item 4): every expected string is written out here by hand from the
// XML 1.0 and GFM rules, not produced by the functions under test.
#include <doctest/doctest.h>

#include <string>

#include "reports/escape.hpp"
#include "reports/plot.hpp"
#include "reports/table.hpp"

using namespace ropekit;

namespace {
const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER in UTF-8
}

TEST_CASE("xml_escape: markup characters as entities, controls and invalid UTF-8 as U+FFFD, line breaks as spaces") {
  CHECK(xml_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
  CHECK(xml_escape("</text><script>x</script>") == "&lt;/text&gt;&lt;script&gt;x&lt;/script&gt;");
  CHECK(xml_escape("&amp;") == "&amp;amp;");  // an entity typed by the user is text, not markup
  CHECK(xml_escape("l1\nl2\r\nl3\rl4\tx") == "l1 l2 l3 l4 x");
  CHECK(xml_escape(std::string("a\0b", 3)) == "a" + kFffd + "b");  // NUL: not even a reference is allowed
  CHECK(xml_escape("\x01\x1b[31m\x7f") == kFffd + kFffd + "[31m" + kFffd);
  CHECK(xml_escape("\xC2\x85") == kFffd);  // U+0085 (NEL), a C1 control
  CHECK(xml_escape("\xEF\xBF\xBE\xEF\xBF\xBF") == kFffd + kFffd);  // U+FFFE, U+FFFF: not XML characters
  // Invalid UTF-8, one replacement per byte: a lone continuation byte, an overlong '/', a surrogate, beyond
  // U+10FFFF, a sequence cut short, bytes that never occur.
  CHECK(xml_escape("\x80") == kFffd);
  CHECK(xml_escape("\xC0\xAF") == kFffd + kFffd);
  CHECK(xml_escape("\xED\xA0\x80") == kFffd + kFffd + kFffd);
  CHECK(xml_escape("\xF4\x90\x80\x80") == kFffd + kFffd + kFffd + kFffd);
  CHECK(xml_escape("x\xE2\x82") == "x" + kFffd + kFffd);
  CHECK(xml_escape("\xFE\xFF") == kFffd + kFffd);
  // Valid text passes unchanged: 2-, 3- and 4-byte characters (theta, U+2212 minus, U+1D70B pi).
  CHECK(xml_escape("\xCE\xB8 \xE2\x88\x92 \xF0\x9D\x9C\x8B") == "\xCE\xB8 \xE2\x88\x92 \xF0\x9D\x9C\x8B");
}

TEST_CASE("markdown_cell: '|' escaped (backslashes before it doubled), line breaks as spaces, controls replaced") {
  CHECK(markdown_cell("a|b") == "a\\|b");
  CHECK(markdown_cell("a\\|b") == "a\\\\\\|b");  // "\|" typed: "\\" then "\|", which GFM renders as "\|"
  CHECK(markdown_cell("a\\b") == "a\\b");        // a backslash before no pipe is left alone
  CHECK(markdown_cell("row1\nrow2\r\nrow3") == "row1 row2 row3");
  CHECK(markdown_cell(std::string("x\0\x1b", 3) + "\xFF") == "x" + kFffd + kFffd + kFffd);
  CHECK(markdown_cell("\xCE\xB8 <b>") == "\xCE\xB8 <b>");
}

TEST_CASE("hostile text in a table's Markdown stays in its cell and row; in a figure it stays text") {
  Table t;
  t.columns = {"na|me", "x"};
  t.add_row({std::string("a|b\nc"), 1.0});
  CHECK(to_markdown(t) == "| na\\|me | x |\n|---|---|\n| a\\|b c | 1 |\n");
  PlotSeries s{"</text>&\n\x01", {1, 2}, {1, 2}};
  PlotOptions o;
  o.title = "t<\xFF>";
  o.xlabel = "x\"y";
  const std::string svg = svg_line_plot({s}, o);
  CHECK(svg.find("data-label=\"&lt;/text&gt;&amp; " + kFffd + "\"") != std::string::npos);
  CHECK(svg.find(">t&lt;" + kFffd + "&gt;</text>") != std::string::npos);
  CHECK(svg.find(">x&quot;y</text>") != std::string::npos);
  CHECK(svg.find("</text>&") == std::string::npos);
  CHECK(svg.find('\x01') == std::string::npos);
  CHECK(svg.find('\xFF') == std::string::npos);
}
