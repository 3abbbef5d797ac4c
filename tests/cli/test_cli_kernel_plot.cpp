// kernel --plot as a user meets it (issue 24): three encodings over every lag 1..131072 make a figure under 1 MB
// whose envelopes reach each curve's extremes in the table written beside it; a panel per column; options for
// title, size, axes and log scales; bad options refused before any output.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "reports/table.hpp"
#include "ropekit/core/number_text.hpp"
#include "tests/support.hpp"
#include "tests/svg_support.hpp"

using namespace ropekit::test;

namespace {

double num(const std::string& s) { return ropekit::parse_double(s).value(); }

std::size_t column_of(const ropekit::CsvData& t, const std::string& name) {
  const auto it = std::find(t.columns.begin(), t.columns.end(), name);
  REQUIRE(it != t.columns.end());
  return static_cast<std::size_t>(it - t.columns.begin());
}

}  // namespace

TEST_CASE("three encodings over lags 1..131072: under 1 MB, each band spans the curve's min and max in the table") {
  ScratchDir dir("plot-big");
  const std::string svg = dir.file("k.svg"), out = dir.file("k.csv");
  const std::vector<std::string> encodings = {"rope:dim=128,base=10000,F=64",
                                              "rope:dim=128,base=500000,F=64,scaling=llama3(factor=8,orig=8192,low=1,high=4)",
                                              "xpos:dim=128,base=10000,scale_base=512"};
  const auto r = run_ropekit("kernel --encoding '" + encodings[0] + "' '" + encodings[1] + "' '" + encodings[2] +
                             "' --lags 1:131073 --plot " + svg + " --out " + out);
  REQUIRE(r.exit_code == 0);
  const std::string text = slurp(svg);
  CHECK(text.size() < 1000000);
  // Two panels (kernel, content variance) of three curves each, a legend row per encoding.
  CHECK(svg_elements(text, "<g class=\"panel\"").size() == 2);
  CHECK(svg_elements(text, "<g class=\"series\"").size() == 6);
  const auto legend = svg_texts(text, "legend-label");
  REQUIRE(legend.size() == 3);
  // The table's extremes per encoding and column, mapped through each panel's frame and y ticks.
  const auto t = ropekit::parse_csv(slurp(out), "k.csv");
  REQUIRE(t.rows.size() == 3 * 131072);
  const auto panels = svg_elements(text, "<rect class=\"frame\"");
  const auto series = svg_elements(text, "<g class=\"series\"");
  const auto bands = svg_elements(text, "<path class=\"envelope\"");
  REQUIRE(bands.size() == 6);
  std::size_t b = 0;
  for (std::size_t p = 0; p < 2; ++p) {
    const std::size_t col = column_of(t, p == 0 ? "kernel" : "content_variance");
    // The panel's automatic range: the extremes over all its curves, padded by 4% of the span.
    double all_lo = INFINITY, all_hi = -INFINITY;
    std::map<std::string, std::pair<double, double>> ext;
    for (const auto& row : t.rows) {
      const double v = num(row[col]);
      auto& e = ext.try_emplace(row[0], INFINITY, -INFINITY).first->second;
      e.first = std::min(e.first, v), e.second = std::max(e.second, v);
      all_lo = std::min(all_lo, v), all_hi = std::max(all_hi, v);
    }
    const double ylo = all_lo - 0.04 * (all_hi - all_lo), yhi = all_hi + 0.04 * (all_hi - all_lo);
    const double y0 = svg_number(panels[p], "y"), h = svg_number(panels[p], "height");
    CHECK(y0 == std::round(y0));  // whole pixels (300 px panels): the band's 0.1 px printing is the only rounding
    CHECK(h == std::round(h));
    auto py = [&](double v) { return y0 + (1 - (v - ylo) / (yhi - ylo)) * h; };
    for (std::size_t j = 0; j < 3; ++j, ++b) {
      CAPTURE(p);
      CAPTURE(j);
      CHECK(svg_attr(series[b], "data-label") == encodings[j]);
      const auto band = svg_path(svg_attr(bands[b], "d"));
      double top = INFINITY, bottom = -INFINITY;
      for (const auto& [x, y] : band.points) top = std::min(top, y), bottom = std::max(bottom, y);
      CHECK(std::abs(top - py(ext[encodings[j]].second)) <= 0.051);  // printed to 0.1 px
      CHECK(std::abs(bottom - py(ext[encodings[j]].first)) <= 0.051);
    }
  }
  // A log lag axis (1..131072 spans five decades) labelled 10^0 .. 10^5.
  const auto x = svg_texts(text, "xtick");
  CHECK(x == std::vector<std::string>{"10^0", "10^1", "10^2", "10^3", "10^4", "10^5"});
}

TEST_CASE("kernel --plot options: columns, title, size, linear axis, ranges, log y") {
  ScratchDir dir("plot-options");
  const std::string svg = dir.file("k.svg");
  const auto r = run_ropekit("kernel --encoding rope:dim=64 --lags 0:2000 --plot " + svg +
                             " --plot-columns kernel,sine_residual,content_variance --plot-title 'My kernels' "
                             "--plot-size 1200x900 --plot-x linear --plot-xrange 0:1000 --plot-yrange kernel=-0.5:1 "
                             "--plot-log-y content_variance --out " + dir.file("k.csv"));
  REQUIRE(r.exit_code == 0);
  const std::string text = slurp(svg);
  const auto root = svg_elements(text, "<svg ").at(0);
  CHECK(svg_attr(root, "width") == "1200");
  CHECK(num(svg_attr(root, "height")) >= 900);  // notes (the lags past 1000) add lines below
  CHECK(svg_texts(text, "title") == std::vector<std::string>{"My kernels"});
  const auto panels = svg_elements(text, "<g class=\"panel\"");
  REQUIRE(panels.size() == 3);
  CHECK(svg_attr(panels[0], "data-ylabel") == "kernel Phi(Dp)");
  CHECK(svg_attr(panels[1], "data-ylabel") == "sine residual");
  CHECK(svg_attr(panels[2], "data-ylabel") == "content variance");
  // Linear lag axis 0..1000: ticks 0, 200, ..., 1000; the 999 lags beyond it counted in a note (and on stderr).
  CHECK(svg_texts(text, "xtick").front() == "0");
  CHECK(svg_texts(text, "xtick").back() == "1000");
  CHECK(r.err.find("999 point(s) of rope:dim=64,base=10000,F=32 outside the x range [0, 1000] not drawn") !=
        std::string::npos);
  // The kernel panel's given range: ticks from -0.5 to 1 (a true minus), nothing beyond it (Phi <= 1).
  const auto y = svg_texts(text, "ytick");
  CHECK(std::find(y.begin(), y.end(), "\u22120.5") != y.end());
  CHECK(svg_elements(text, "<g class=\"clipped\"").empty());
  // Content variance of rope (rho = 1): 64 + 64 Phi(2 Dp) in [~0, 128]: on the log axis, decades labelled 10^k.
  CHECK(std::find(y.begin(), y.end(), "10^2") != y.end());
}

TEST_CASE("kernel --plot: a y range that cuts the curves marks them and says so on stderr") {
  ScratchDir dir("plot-clip");
  const std::string svg = dir.file("k.svg");
  const auto r = run_ropekit("kernel --encoding rope:dim=64 --lags 0:500 --plot " + svg +
                             " --plot-columns kernel --plot-yrange 0.3:0.5 --plot-x linear");  // linear: lag 0 (Phi = 1) drawn
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("note: --plot: kernel Phi(Dp): rope:dim=64,base=10000,F=32 goes above the y range (up to 1;") !=
        std::string::npos);
  CHECK(r.err.find("goes below the y range") != std::string::npos);  // Phi dips to 0.08 within 500 lags
  const std::string text = slurp(svg);
  CHECK(svg_elements(text, "<g class=\"clipped\" data-side=\"above\"").size() == 1);
  CHECK(svg_elements(text, "<g class=\"clipped\" data-side=\"below\"").size() == 1);
}

TEST_CASE("kernel --plot streams: more lags than a block, the same figure as one block") {
  ScratchDir dir("plot-stream");
  const auto a = run_ropekit("kernel --encoding rope:dim=16 --lags 0:20000 --plot " + dir.file("a.svg") + " --out " +
                             dir.file("a.csv"));
  const auto b = run_ropekit("kernel --encoding rope:dim=16 --lags 0:20000 --block-rows 777 --plot " +
                             dir.file("b.svg") + " --out " + dir.file("b.csv"));
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(slurp(dir.file("a.svg")) == slurp(dir.file("b.svg")));
  CHECK(slurp(dir.file("a.csv")) == slurp(dir.file("b.csv")));
}

TEST_CASE("kernel --plot options refused: one error line, exit 2, no table and no figure") {
  ScratchDir dir("plot-bad");
  const std::string svg = dir.file("k.svg");
  const std::string base = "kernel --encoding rope:dim=64 xpos:dim=64 --lags 1:100 --plot " + svg;
  for (const auto& [args, expect] : std::vector<std::pair<std::string, std::string>>{
           {base + " --plot-columns kernal", "--plot-columns = kernal (must be one of kernel, content_variance,"},
           {base + " --plot-columns expected_kernel", "--plot-columns = expected_kernel (must be a column these encodings have"},
           {base + " --plot-columns kernel,kernel", "--plot-columns = kernel (must be named once)"},
           {base + " --plot-size 100x100", "--plot-size = 100x100 (must be WIDTHxHEIGHT in pixels"},
           {base + " --plot-size 900x200", "--plot-size = 900x200 (must be a size that fits the figure: height 200 px"},
           {base + " --plot-x logarithmic", "--plot-x = logarithmic (must be auto, linear or log)"},
           {base + " --plot-xrange 5", "--plot-xrange = 5 (must be LO:HI"},
           {base + " --plot-xrange 10:1", "--plot-xrange = 10:1 (must be LO:HI"},
           {base + " --plot-x log --plot-xrange=-5:", "--plot-xrange = -5: (must be above 0 on a log lag axis)"},
           {base + " --plot-yrange 0:1", "--plot-yrange = 0:1 (must be COLUMN=LO:HI with several panels"},
           {base + " --plot-yrange kernel=a:b", "--plot-yrange = a:b (must be LO:HI"},
           {base + " --plot-yrange sine_residual=0:1", "--plot-yrange = sine_residual=... (must be for a plotted column"},
           {base + " --plot-log-y kernel --plot-yrange=kernel=-1:1", "--plot-yrange = kernel=-1:1 (must be a range above 0 on a log axis"},
           {base + " --plot-log-y phase", "--plot-log-y = phase (must be a plotted column"},
           {"kernel --encoding rope:dim=64 --lags=-5:0 --plot " + svg + " --plot-x log", "--plot-x = log (must be used with a positive lag"},
           {"kernel --encoding rope:dim=64 --plot-title T", "--plot-* options are given with --plot FILE.svg only"},
       }) {
    check_rejected(args, expect);
    CHECK_FALSE(std::filesystem::exists(svg));
  }
}

TEST_CASE("kernel --plot-labels, --plot-line and the original-context marker (issue 32)") {
  ScratchDir dir("plot-labels");
  const std::string svg = dir.file("k.svg");
  const std::string yarn = "rope:dim=64,base=10000,scaling=yarn(factor=4,orig=512)";
  const auto r = run_ropekit("kernel --encoding rope:dim=64 '" + yarn + "' --lags 1:4096 --plot " + svg +
                             " --plot-labels 'plain RoPE,YaRN x4' --plot-line median --out " + dir.file("k.csv"));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string plot = slurp(svg);
  CHECK(svg_texts(plot, "legend-label") == std::vector<std::string>{"plain RoPE", "YaRN x4"});
  CHECK(svg_elements(plot, "<path class=\"median\"").size() == 4);  // two curves x two panels
  CHECK(svg_elements(plot, "<path class=\"mean\"").empty());
  // YaRN's original context 512, marked once with its label, its line in both panels at log10(512) of [0, log10 4096].
  CHECK(svg_texts(plot, "marker") == std::vector<std::string>{"original context 512"});
  const auto lines = svg_elements(plot, "<line class=\"marker\"");
  REQUIRE(lines.size() == 2);
  const auto frame = svg_elements(plot, "<rect class=\"frame\"").at(0);
  const double x0 = svg_number(frame, "x"), w = svg_number(frame, "width");
  CHECK(std::abs(svg_number(lines[0], "x1") - (x0 + w * std::log10(512.0) / std::log10(4096.0))) <= 0.051);  // 0.1 px printed
  // --plot-line none: the bands only.
  REQUIRE(run_ropekit("kernel --encoding rope:dim=64 --lags 1:4096 --plot " + svg + " --plot-line none").exit_code == 0);
  CHECK(svg_elements(slurp(svg), "<path class=\"mean\"").empty());
  CHECK(svg_elements(slurp(svg), "<path class=\"envelope\"").size() == 2);
  // Refusals: a label count other than the curves', a repeated label, an unknown line.
  const std::string base = "kernel --encoding rope:dim=64 xpos:dim=64 --lags 1:100 --plot " + dir.file("x.svg");
  check_rejected(base + " --plot-labels a", "--plot-labels = 'a' (must be 2 label(s), one per curve (1 given))");
  check_rejected(base + " --plot-labels a,b,c", "--plot-labels = 'a,b,c' (must be 2 label(s), one per curve (3 given))");
  check_rejected(base + " --plot-labels a,a", "--plot-labels = 'a' (must be distinct labels (given twice))");
  check_rejected(base + " --plot-line spline", "--plot-line = spline (must be mean, median or none)");
  CHECK_FALSE(std::filesystem::exists(dir.file("x.svg")));
}

TEST_CASE("kernel --plot: a long spelling's legend label stays inside the figure") {
  // Before: the spelling ran on in one text line past the 900 px figure.
  ScratchDir dir("plot-long-label");
  const std::string svg = dir.file("k.svg");
  const std::string part = "rope(dim=128,base=500000,scaling=llama3(factor=8,low=1,high=4,orig=8192))";
  REQUIRE(run_ropekit("kernel --encoding 'rope:dim=128,base=500000,scaling=llama3(factor=8,low=1,high=4,orig=8192)' "
                      "'direct-sum:[" + part + "," + part + "," + part + "]' --lags 1:100 --plot " + svg)
              .exit_code == 0);
  const std::string plot = slurp(svg);
  const double width = std::stod(svg_attr(svg_elements(plot, "<svg").at(0), "width"));
  for (const auto& e : svg_elements(plot, "<text class=\"legend-label\"")) {
    const auto at = plot.find(e);
    const std::string inner = plot.substr(at + e.size(), plot.find("</text>", at) - at - e.size());
    // each line (text, then tspans) at 6.6 px a character from x must end inside the figure
    std::size_t chars = 0, longest_line = 0;
    for (std::size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '<') {
        longest_line = std::max(longest_line, chars), chars = 0;
        i = inner.find('>', i);
        continue;
      }
      if (inner[i] == '&') i = inner.find(';', i);
      ++chars;
    }
    longest_line = std::max(longest_line, chars);
    CHECK(svg_number(e, "x") + 6.6 * static_cast<double>(longest_line) <= width);
  }
}
