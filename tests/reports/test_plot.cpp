// SVG figures: envelopes that show every extreme (the band's pixels against the data's min and max mapped through
// the frame read back from the SVG), a size bounded by the pixel columns whatever the point count, 10^k ticks,
// legends and notes outside the data, values beyond a given range marked and noted, layouts that do not fit refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "reports/plot.hpp"
#include "tests/support.hpp"
#include "tests/svg_support.hpp"

using namespace ropekit;
using namespace ropekit::test;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

struct Frame {
  double x, y, w, h;
};
Frame frame(const std::string& svg, std::size_t k = 0) {
  const auto e = svg_elements(svg, "<rect class=\"frame\"").at(k);
  return {svg_number(e, "x"), svg_number(e, "y"), svg_number(e, "width"), svg_number(e, "height")};
}

// n points of sin(x / 7) over [0, 1000].
PlotSeries sine(const std::string& label, int n) {
  PlotSeries s;
  s.label = label;
  for (int i = 0; i < n; ++i) {
    const double x = 1000.0 * i / (n - 1);
    s.x.push_back(x);
    s.y.push_back(std::sin(x / 7));
  }
  return s;
}

}  // namespace

TEST_CASE("nice ticks step by 1 - 2 or 5 times a power of ten and cover the range") {
  CHECK(nice_ticks(0, 8192, 8) == std::vector<double>{0, 2000, 4000, 6000, 8000});
  CHECK(nice_ticks(-1, 1, 4) == std::vector<double>{-1, -0.5, 0, 0.5, 1});
  CHECK(nice_ticks(0.3, 0.3).size() == 1);
}

TEST_CASE("the envelope band reaches the data's extremes: min and max mapped through the frame, to the 0.1 px printed") {
  const PlotSeries s = sine("sin", 100000);
  const double lo = *std::min_element(s.y.begin(), s.y.end()), hi = *std::max_element(s.y.begin(), s.y.end());
  const std::string svg = svg_line_plot({s}, PlotOptions{});
  const Frame f = frame(svg);
  // The frame is whole pixels here (so the 0.1 px printing of the band is the only rounding below).
  CHECK(f.y == std::round(f.y));
  CHECK(f.h == std::round(f.h));
  // The automatic range pads the data's by 4% of its span on each side.
  const double ylo = lo - 0.04 * (hi - lo), yhi = hi + 0.04 * (hi - lo);
  auto py = [&](double v) { return f.y + (1 - (v - ylo) / (yhi - ylo)) * f.h; };
  const auto bands = svg_elements(svg, "<path class=\"envelope\"");
  REQUIRE(bands.size() == 1);
  const auto band = svg_path(svg_attr(bands[0], "d"));
  double top = INFINITY, bottom = -INFINITY;
  for (const auto& [x, y] : band.points) top = std::min(top, y), bottom = std::max(bottom, y);
  CHECK(std::abs(top - py(hi)) <= 0.051);  // coordinates are printed with one decimal
  CHECK(std::abs(bottom - py(lo)) <= 0.051);
  // The band spans the frame's width: first and last columns' mean x at the data's ends (within a column).
  const auto mean = svg_path(svg_attr(svg_elements(svg, "<path class=\"mean\"").at(0), "d"));
  CHECK(mean.moves == 1);
  CHECK(mean.points.size() == static_cast<std::size_t>(plot_columns(900)));  // one vertex per pixel column
  CHECK(mean.points.front().first >= f.x);
  CHECK(mean.points.front().first <= f.x + 1);
  CHECK(mean.points.back().first >= f.x + f.w - 1);
  CHECK(mean.points.back().first <= f.x + f.w);
}

TEST_CASE("a figure's size is bounded by its pixel columns, not its points: three curves of 10^6 points under 1 MB") {
  auto figure = [](int n) {
    std::vector<PlotSeries> v = {sine("a", n), sine("b", n), sine("c", n)};
    for (auto& y : v[1].y) y *= 0.5;
    for (auto& y : v[2].y) y = y * y;
    return svg_line_plot(v, PlotOptions{});
  };
  const std::string small = figure(10000), large = figure(1000000);
  CHECK(large.size() < 1000000);
  // Same columns filled either way: the sizes agree to a few percent (numbers of the same lengths).
  CHECK(static_cast<double>(large.size()) <= 1.05 * static_cast<double>(small.size()));
}

TEST_CASE("sparse points (at most one per column) are drawn exactly: the line through them, no band") {
  PlotSeries s{"few", {0, 1, 2, 3}, {0, 1, 0.5, 1}, "", 1.5, false};
  const std::string svg = svg_line_plot({s}, PlotOptions{});
  CHECK(svg_elements(svg, "<path class=\"envelope\"").empty());
  const auto mean = svg_path(svg_attr(svg_elements(svg, "<path class=\"mean\"").at(0), "d"));
  REQUIRE(mean.points.size() == 4);
  const Frame f = frame(svg);
  for (int i = 0; i < 4; ++i) CHECK(std::abs(mean.points[static_cast<std::size_t>(i)].first - (f.x + f.w * i / 3)) <= 0.051);
}

TEST_CASE("a non-finite value breaks the curve; a lone column is a dot") {
  PlotSeries s{"gap", {0, 1, 2, 3, 4, 5}, {1, 2, std::nan(""), 2, 1, 2}, "", 1.5, false};
  PlotSeries dot{"dot", {0, 2.5, 5}, {std::nan(""), 3, std::nan("")}, "", 1.5, false};
  const std::string svg = svg_line_plot({s, dot}, PlotOptions{});
  CHECK(svg_path(svg_attr(svg_elements(svg, "<path class=\"mean\"").at(0), "d")).moves == 2);
  CHECK(count(svg, "<circle ") == 1);
}

TEST_CASE("ticks: 10^k on log axes, decimals as the step needs and a true minus sign on linear ones") {
  PlotSeries s{"s", {1, 10, 100, 1000, 1e4, 1e5}, {1e-3, 1e-2, 0.1, 1, 10, 100}, "", 1.5, false};
  PlotOptions o;
  o.log_x = o.log_y = true;
  const std::string svg = svg_line_plot({s}, o);
  for (const char* t : {"10^0", "10^1", "10^2", "10^3", "10^4", "10^5"}) {
    const auto x = svg_texts(svg, "xtick");
    CHECK(std::find(x.begin(), x.end(), t) != x.end());
  }
  const auto y = svg_texts(svg, "ytick");
  CHECK(std::find(y.begin(), y.end(), "10^\u22122") != y.end());  // 10^-2 with U+2212
  CHECK(svg.find("1e") == std::string::npos);                      // no 1e3-style label anywhere
  PlotSeries lin{"lin", {0, 1}, {-1, 1}, "", 1.5, false};
  const auto t = svg_texts(svg_line_plot({lin}, PlotOptions{}), "ytick");
  CHECK(std::find(t.begin(), t.end(), "\u22120.5") != t.end());
  CHECK(std::find(t.begin(), t.end(), "0.5") != t.end());
  CHECK(std::find(t.begin(), t.end(), "0.0") != t.end());  // as many decimals as the step, zero too
  // Large linear values: m x 10^k.
  PlotSeries big{"big", {0, 1}, {0, 4e6}, "", 1.5, false};
  const auto b = svg_texts(svg_line_plot({big}, PlotOptions{}), "ytick");
  CHECK(std::find(b.begin(), b.end(), "2\u00d710^6") != b.end());
}

TEST_CASE("values beyond a given y range are marked on the frame and noted, never dropped silently") {
  const PlotSeries s = sine("sin", 20000);
  PlotOptions o;
  o.ymax = 0.5;
  const std::string svg = svg_line_plot({s}, o);
  const auto marks = svg_elements(svg, "<g class=\"clipped\"");
  REQUIRE(marks.size() == 1);
  CHECK(svg_attr(marks[0], "data-side") == "above");
  const auto notes = svg_texts(svg, "note");
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("sin goes above the y range (up to 1;") != std::string::npos);
  // The automatic range shows everything: no mark, no note.
  const std::string all = svg_line_plot({s}, PlotOptions{});
  CHECK(svg_elements(all, "<g class=\"clipped\"").empty());
  CHECK(svg_texts(all, "note").empty());
}

TEST_CASE("a log y axis notes the values <= 0 it cannot draw, with their count; off-axis x are noted too") {
  PlotSeries s{"mixed", {}, {}, "", 1.5, false};
  int nonpositive = 0;
  for (int i = 0; i < 1000; ++i) {
    s.x.push_back(i);
    s.y.push_back(std::cos(i * 0.05) + 0.3);
    nonpositive += s.y.back() <= 0;
  }
  REQUIRE(nonpositive > 0);
  PlotOptions o;
  o.log_y = true;
  o.ylabel = "Y";
  o.xmin = 100;
  std::size_t outside = 0;
  for (double x : s.x) outside += x < 100;
  const auto notes = svg_texts(svg_line_plot({s}, o), "note");
  std::int64_t nonpositive_shown = 0;
  for (std::size_t i = 100; i < s.y.size(); ++i) nonpositive_shown += s.y[i] <= 0;
  REQUIRE(notes.size() == 2);
  CHECK(notes[0] == fmt::format("{} point(s) of mixed outside the x range [100, 999] not drawn", outside));
  CHECK(notes[1] == fmt::format("Y (log axis): {} value(s) &lt;= 0 of mixed not drawn", nonpositive_shown));
}

TEST_CASE("panels share the x axis; the legend and notes sit below the last panel, one row per label") {
  const XAxis x{0, 1000, false};
  const int columns = plot_columns(900);
  auto series = [&](const std::string& label, double scale) {
    EnvelopeSeries e{label, SeriesEnvelope(x, columns), "", 1.6, false};
    for (int i = 0; i <= 5000; ++i) e.envelope.add(i / 5.0, scale * std::sin(i / 35.0));
    return e;
  };
  PlotPanel top{"kernel", {series("a", 1), series("b<&>", 2)}, false, {}, {}};
  PlotPanel bottom{"variance", {series("a", 3), series("b<&>", 4)}, false, {}, 1.0};
  FigureOptions o;
  o.title = "T";
  const Figure fig = svg_figure(x, {top, bottom}, o);
  CHECK(count(fig.svg, "<g class=\"panel\"") == 2);
  CHECK(count(fig.svg, "<g class=\"series\"") == 4);
  CHECK(svg_texts(fig.svg, "legend-label") == std::vector<std::string>{"a", "b&lt;&amp;&gt;"});  // escaped, once each
  CHECK(svg_texts(fig.svg, "xtick").size() >= 3);  // under the last panel only
  REQUIRE(fig.notes.size() == 2);                  // both curves beyond the second panel's ymax = 1
  const Frame f0 = frame(fig.svg, 0), f1 = frame(fig.svg, 1);
  CHECK(f1.y > f0.y + f0.h);
  CHECK(f0.x == f1.x);
  CHECK(f0.w == f1.w);
  for (const auto& cls : {"<text class=\"legend-label\"", "<text class=\"note\""})
    for (const auto& e : svg_elements(fig.svg, cls)) CHECK(svg_number(e, "y") > f1.y + f1.h + 20);  // below the ticks
  // The same label has the same colour in both panels.
  const auto bands = svg_elements(fig.svg, "<path class=\"envelope\"");
  REQUIRE(bands.size() == 4);
  CHECK(svg_attr(bands[0], "fill") == svg_attr(bands[2], "fill"));
  CHECK(svg_attr(bands[0], "fill") != svg_attr(bands[1], "fill"));
}

TEST_CASE("layouts that do not fit, curves off the figure's axis and bad limits are refused; empty panels noted") {
  const XAxis x{0, 1, false};
  PlotPanel p{"y", {EnvelopeSeries{"a", SeriesEnvelope(x, plot_columns(900)), "", 1, false}}, false, {}, {}};
  p.series[0].envelope.add(0.5, 1);
  FigureOptions small;
  small.height = 150;
  CHECK_THROWS_WITH_AS(svg_figure(x, {p, p}, small), doctest::Contains("px per panel"), std::invalid_argument);
  FigureOptions narrow;
  narrow.width = 150;
  CHECK_THROWS_WITH_AS(check_figure_layout(narrow, 1, {"a"}), doctest::Contains("width 150 px"), std::invalid_argument);
  CHECK_THROWS_AS(svg_figure(XAxis{0, 2, false}, {p}, FigureOptions{}), std::invalid_argument);  // other axis
  CHECK_THROWS_AS(svg_figure(x, {}, FigureOptions{}), std::invalid_argument);
  PlotPanel bad = p;
  bad.log_y = true;
  bad.ymin = -1;
  CHECK_THROWS_AS(svg_figure(x, {bad}, FigureOptions{}), std::invalid_argument);
  PlotPanel empty = p;
  empty.log_y = true;
  empty.series[0].envelope = SeriesEnvelope(x, plot_columns(900));
  empty.series[0].envelope.add(0.5, -1);
  const Figure f = svg_figure(x, {empty}, FigureOptions{});
  CHECK(std::find(f.notes.begin(), f.notes.end(), "y: nothing to draw (a log axis draws values > 0 only)") != f.notes.end());
  CHECK_THROWS_AS(svg_line_plot({PlotSeries{"x", {0, 1}, {1}, "", 1, false}}, PlotOptions{}), std::invalid_argument);
  CHECK_THROWS_AS(svg_line_plot({PlotSeries{"x", {0}, {std::nan("")}, "", 1, false}}, PlotOptions{}),
                  std::invalid_argument);
}

TEST_CASE("golden structure: panels, curves, ticks, legend and notes of a fixed two-panel figure") {
  // Lags 1..1000 on a log axis; a dense curve (envelope and mean) and a sparse one (mean only); the second panel on
  // a log y axis with a given top that cuts the first curve. Set ROPEKIT_UPDATE_GOLDEN=1 to rewrite the file after a
  // deliberate change, and read the diff.
  const XAxis x{1, 1000, true};
  const int columns = plot_columns(700);
  EnvelopeSeries dense{"dense", SeriesEnvelope(x, columns), "", 1.6, false};
  EnvelopeSeries sparse{"sparse", SeriesEnvelope(x, columns), "", 1.6, true};
  for (int i = 1; i <= 1000; ++i) dense.envelope.add(i, std::cos(i / 3.0) / std::sqrt(i));
  for (double v : {1.0, 10.0, 100.0, 1000.0}) sparse.envelope.add(v, 1 / std::log10(10 * v));
  PlotPanel a{"kernel", {dense, sparse}, false, {}, {}};
  EnvelopeSeries dense2 = dense, sparse2 = sparse;
  dense2.envelope = SeriesEnvelope(x, columns);
  for (int i = 1; i <= 1000; ++i) dense2.envelope.add(i, 1 + std::cos(i / 3.0));
  PlotPanel b{"variance", {dense2, sparse2}, true, {}, 1.5};
  FigureOptions o;
  o.title = "Golden";
  o.xlabel = "lag";
  o.width = 700;
  o.vlines = {100};
  o.vline_label = "L = 100";
  const std::string structure = svg_structure(svg_figure(x, {a, b}, o).svg);
  const std::string path = std::string(ROPEKIT_SOURCE_DIR) + "/tests/data/plot-structure.golden";
  if (std::getenv("ROPEKIT_UPDATE_GOLDEN")) std::ofstream(path) << structure;
  CHECK(structure == slurp(path));
}

TEST_CASE("wrap_label: lines of at most the width, broken after ',', ' ' or ':' in the line's second half") {
  CHECK(wrap_label("short", 10) == std::vector<std::string>{"short"});
  CHECK(wrap_label("rope:dim=128,base=500000,F=64", 14) ==
        std::vector<std::string>{"rope:dim=128,", "base=500000,", "F=64"});
  CHECK(wrap_label("abcdefghijkl", 5) == std::vector<std::string>{"abcde", "fghij", "kl"});  // no break point: cut
  CHECK(wrap_label("a b", 2) == std::vector<std::string>{"a", "b"});                         // spaces dropped at breaks
  // U+03B8 (2 bytes) counts as one character and is never split
  CHECK(wrap_label("\xCE\xB8\xCE\xB8\xCE\xB8", 2) == std::vector<std::string>{"\xCE\xB8\xCE\xB8", "\xCE\xB8"});
}

TEST_CASE("a long legend label is wrapped inside the figure: no text line runs past its width") {
  // Before: a 300-character label ran off a 900 px figure (one text line of ~2000 px).
  PlotSeries s = sine(std::string(300, 'x') + ",tail", 1000);
  PlotOptions o;
  o.width = 900;
  const std::string svg = svg_line_plot({s}, o);
  const auto texts = svg_elements(svg, "<text class=\"legend-label\"");
  REQUIRE(texts.size() == 1);
  const double x = svg_number(texts[0], "x");
  std::size_t lines = 0;
  for (const auto& line : wrap_label(std::string(300, 'x') + ",tail", static_cast<std::size_t>((plot_columns(900) - 36) / 6.6))) {
    ++lines;
    CHECK(x + 6.6 * static_cast<double>(line.size()) <= 900);  // the legend's own estimate of a character's width
  }
  CHECK(lines >= 3);
  CHECK(count(svg, "<tspan x=") == lines - 1);
  // The figure grows by the wrapped rows: its height holds the last line (18 px a row).
  const double height = std::stod(svg_attr(svg_elements(svg, "<svg").at(0), "height"));
  CHECK(svg_number(texts[0], "y") + 18.0 * static_cast<double>(lines - 1) <= height);
}

TEST_CASE("the line through the columns: mean, median (the envelope's sketch) or none (band only)") {
  // One column holding 0, 0, 0 and 10 (mean 2.5, lower median 0), beside sparse columns of one point each.
  const XAxis x{0, 100, false};
  const int columns = plot_columns(400);
  EnvelopeSeries dense{"dense", SeriesEnvelope(x, columns, true), "", 1.6, false};
  for (double y : {0.0, 0.0, 10.0, 0.0}) dense.envelope.add(50, y);
  dense.envelope.add(10, 5);
  dense.envelope.add(90, 5);
  PlotPanel p{"y", {dense}, false, -1.0, 11.0};
  FigureOptions o;
  o.width = 400;
  auto centre_y = [&](PlotLine line, const char* cls) {
    o.line = line;
    const std::string svg = svg_figure(x, {p}, o).svg;
    const auto paths = svg_elements(svg, std::string("<path class=\"") + cls + "\"");
    REQUIRE(paths.size() == 1);
    const auto points = svg_path(svg_attr(paths[0], "d")).points;
    REQUIRE(points.size() == 3);
    const Frame f = frame(svg);
    return (f.y + f.h - points[1].second) / f.h * 12 - 1;  // back to data units: y range [-1, 11]
  };
  CHECK(centre_y(PlotLine::mean, "mean") == doctest::Approx(2.5).epsilon(0.01));   // 0.1 px printed: 0.01 units
  CHECK(centre_y(PlotLine::median, "median") == doctest::Approx(0).epsilon(0.01));
  o.line = PlotLine::none;
  const std::string none = svg_figure(x, {p}, o).svg;
  CHECK(count(none, "<path class=\"envelope\"") == 1);
  CHECK(count(none, "<path class=\"mean\"") == 0);
  // A curve without a band keeps its line under none: its points are the data.
  EnvelopeSeries sparse{"sparse", SeriesEnvelope(x, columns), "", 1.6, false};
  sparse.envelope.add(10, 1), sparse.envelope.add(90, 2);
  CHECK(count(svg_figure(x, {PlotPanel{"y", {sparse}, false, {}, {}}}, o).svg, "<path class=\"mean\"") == 1);
  // A median line needs envelopes that keep medians.
  o.line = PlotLine::median;
  CHECK_THROWS_AS(svg_figure(x, {PlotPanel{"y", {sparse}, false, {}, {}}}, o), std::invalid_argument);
}

TEST_CASE("labelled markers: a dotted line in each panel at its lag, the label once, off-axis ones left out") {
  const XAxis x{1, 10000, true};
  const int columns = plot_columns(900);
  EnvelopeSeries s{"s", SeriesEnvelope(x, columns), "", 1.6, false};
  for (int i = 1; i <= 10000; ++i) s.envelope.add(i, std::cos(i / 5.0));
  PlotPanel a{"a", {s}, false, {}, {}}, b{"b", {s}, false, {}, {}};
  FigureOptions o;
  o.markers = {{100, "original context 100"}, {9000, "sliding 9000 (m.gguf: local)"}, {50000, "off the axis"}};
  const std::string svg = svg_figure(x, {a, b}, o).svg;
  CHECK(svg_texts(svg, "marker") == std::vector<std::string>{"original context 100", "sliding 9000 (m.gguf: local)"});
  const auto lines = svg_elements(svg, "<line class=\"marker\"");
  REQUIRE(lines.size() == 4);  // two markers x two panels
  const Frame f = frame(svg);
  CHECK(svg_number(lines[0], "x1") == doctest::Approx(f.x + f.w * 2.0 / 4).epsilon(1e-3));  // log10(100) of [0, 4]
  // The label right of x = 0.7 of the width sits left of its line (text-anchor end), inside the figure.
  const auto texts = svg_elements(svg, "<text class=\"marker\"");
  CHECK(svg_attr(texts[1], "text-anchor") == "end");
}
