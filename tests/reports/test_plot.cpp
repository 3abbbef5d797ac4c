// SVG line plots: one path per series, ticks at 1-2-5 steps, log axes skip non-positive values.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "reports/plot.hpp"

using namespace ropekit;

namespace {
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("nice ticks step by 1 - 2 or 5 times a power of ten and cover the range") {
  CHECK(nice_ticks(0, 8192, 8) == std::vector<double>{0, 2000, 4000, 6000, 8000});
  CHECK(nice_ticks(-1, 1, 4) == std::vector<double>{-1, -0.5, 0, 0.5, 1});
  CHECK(nice_ticks(0.3, 0.3).size() == 1);
}

TEST_CASE("a plot has one path per series and escapes its labels") {
  PlotSeries a{"a<b", {0, 1, 2}, {1, 2, 3}, "", 1.5, false};
  PlotSeries b{"log & skip", {0, 1, 2}, {1e-3, -1, 10}, "#000", 2, true};  // -1 is not drawable on a log axis
  PlotOptions o;
  o.title = "t";
  o.log_y = true;
  o.vlines = {1};
  const std::string svg = svg_line_plot({a, b}, o);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count(svg, "<path ") == 2);
  CHECK(svg.find("a&lt;b") != std::string::npos);
  CHECK(svg.find("log &amp; skip") != std::string::npos);
  CHECK(svg.find("1e-3") != std::string::npos);  // a log tick label
  // The second series breaks at the undrawable point: two moves, no line between them.
  const auto p = svg.find("stroke=\"#000\"");
  const auto d0 = svg.rfind("<path d=\"", p);
  CHECK(svg.substr(d0, p - d0).find(" M") != std::string::npos);
}

TEST_CASE("plots reject mismatched series and empty data") {
  CHECK_THROWS_AS(svg_line_plot({PlotSeries{"x", {0, 1}, {1}, "", 1, false}}, PlotOptions{}), std::invalid_argument);
  CHECK_THROWS_AS(svg_line_plot({PlotSeries{"x", {0}, {std::nan("")}, "", 1, false}}, PlotOptions{}),
                  std::invalid_argument);
}

TEST_CASE("a log x axis: decade ticks, non-positive x breaks the line, a long label widens the legend") {
  PlotSeries a{"a", {0, 1, 10, 100, 1000}, {1, 0.5, 0.2, 0.1, 0.05}, "#000", 1.5, false};
  PlotSeries b{std::string(60, 'x'), {1, 1000}, {0, 1}, "", 1.5, false};
  PlotOptions o;
  o.log_x = true;
  const std::string svg = svg_line_plot({a, b}, o);
  for (const char* tick : {">1e0<", ">1e1<", ">1e2<", ">1e3<"}) CHECK(svg.find(tick) != std::string::npos);
  // x = 0 is not drawable on a log axis: the black path starts at x = 1 with a single move.
  const auto p = svg.find("stroke=\"#000\"");
  const auto d0 = svg.rfind("<path d=\"", p);
  CHECK(count(svg.substr(d0, p - d0), "M") == 1);
  CHECK(svg.find("width=\"440\"") != std::string::npos);  // 44 + 6.6 * 60 px
  // Default (linear) plots keep the 260 px legend.
  CHECK(svg_line_plot({a}, PlotOptions{}).find("width=\"260\"") != std::string::npos);
}
