#pragma once
// Line plots as standalone SVG (no dependencies): for reports that a paper can include directly.

#include <optional>
#include <string>
#include <vector>

namespace ropekit {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y;  ///< same length; non-finite points (or <= 0 on a log axis) break the line
  std::string color;         ///< empty: the next colour of the palette
  double width = 1.6;
  bool dashed = false;
};

struct PlotOptions {
  std::string title, xlabel, ylabel;
  int width = 900, height = 460;  ///< pixels
  bool log_x = false;                      ///< log10 x axis: points with x <= 0 break the line
  bool log_y = false;
  std::optional<double> ymin, ymax;        ///< default: the data's range
  std::vector<double> vlines;              ///< dotted vertical markers (e.g. the training length)
  std::string vline_label;                 ///< text beside the first marker
};

/// @throws std::invalid_argument if a series has x and y of different lengths or nothing is finite.
std::string svg_line_plot(const std::vector<PlotSeries>& series, const PlotOptions& options);

/// "Nice" tick positions (1, 2, 5 x 10^k steps) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

}  // namespace ropekit
