#pragma once
// Figures as standalone SVG (no dependencies) for reports and papers: panels stacked over one shared x axis, each
// curve drawn from its per-pixel-column envelope (envelope.hpp: a band from min to max where a column holds
// several points, a line through the columns' means), so the file stays small for any number of points and nothing
// is hidden. Legends sit below the panels, outside the data; ticks read 10^k on log axes; values beyond a given y
// range are marked on the frame and noted, never clipped silently.

#include <optional>
#include <string>
#include <vector>

#include "ropekit/core/envelope.hpp"

namespace ropekit {

/// One curve of a panel, already summarised per column (its axis must be the figure's x axis).
struct EnvelopeSeries {
  std::string label;
  SeriesEnvelope envelope;
  std::string color;  ///< empty: the label's colour in the palette (the same label has the same colour in every panel)
  double width = 1.6;
  bool dashed = false;
};

struct PlotPanel {
  std::string ylabel;
  std::vector<EnvelopeSeries> series;
  bool log_y = false;                ///< values <= 0 are not drawable: counted in a note
  std::optional<double> ymin, ymax;  ///< default: the data's range (a linear axis padded by 4%)
};

/// What a curve's line follows through its columns: their means (a column holding a whole number of periods of a
/// fast cosine averages out, its neighbours do not: a comb of spikes on a dense curve), their medians (the
/// envelope's QuantileSketch, exact up to 128 values a column), or nothing (the band only; a run of columns of one
/// point each, which has no band, keeps its line).
enum class PlotLine { mean, median, none };

/// A labelled dotted vertical line across the panels (the original context length, a sliding window).
struct PlotMarker {
  double at = 0;
  std::string label;
};

struct FigureOptions {
  std::string title, xlabel;
  int width = 900;
  int height = 0;  ///< pixels of title, panels, axis and legend (0: 300 per panel); notes add lines below
  std::vector<double> vlines;  ///< dotted vertical markers across the panels (e.g. the training length)
  std::string vline_label;     ///< text beside the first marker
  std::vector<PlotMarker> markers;  ///< more markers, each with its own label (stacked at the first panel's top)
  PlotLine line = PlotLine::mean;   ///< median: every series' envelope must keep medians
};

struct Figure {
  std::string svg;
  std::vector<std::string> notes;  ///< what the figure could not show as drawn (also written in the figure)
};

/// The plot area's width in pixels, which is the number of envelope columns a figure `width` px wide draws.
int plot_columns(int width);

/// A legend label as the figure writes it: lines of at most `chars` characters (the plot's width), broken after a
/// ',', ' ' or ':' where one falls in the line's second half, else at the width.
std::vector<std::string> wrap_label(const std::string& label, std::size_t chars);

/// Whether a figure of `panels` panels and a legend of `labels` fits `options`' size.
/// @throws std::invalid_argument with the reason (a width under 208 px, panels under 60 px high, no panel).
void check_figure_layout(const FigureOptions& options, std::size_t panels, const std::vector<std::string>& labels);

/// A panel with nothing drawable is drawn empty with a note.
/// @throws std::invalid_argument (with the reason) as check_figure_layout, for a series on another x axis, or a
/// given y limit that is not finite (or not > 0 on a log axis) or an empty given y range, or a median line of a
/// series whose envelope keeps no medians.
Figure svg_figure(const XAxis& x, const std::vector<PlotPanel>& panels, const FigureOptions& options);

/// A curve given point by point, for the one-panel convenience below.
struct PlotSeries {
  std::string label;
  std::vector<double> x, y;  ///< same length; non-finite points (or <= 0 on a log axis) break the line
  std::string color;         ///< empty: the next colour of the palette
  double width = 1.6;
  bool dashed = false;
};

struct PlotOptions {
  std::string title, xlabel, ylabel;
  int width = 900, height = 460;  ///< pixels in all
  bool log_x = false;             ///< log10 x axis: points with x <= 0 are left out (counted in a note)
  bool log_y = false;
  std::optional<double> xmin, xmax;  ///< default: the drawable points' range
  std::optional<double> ymin, ymax;  ///< default: the data's range
  std::vector<double> vlines;
  std::string vline_label;
};

/// One panel of point-by-point series: their x range, envelopes and svg_figure.
/// @throws std::invalid_argument if a series has x and y of different lengths or nothing is drawable.
std::string svg_line_plot(const std::vector<PlotSeries>& series, const PlotOptions& options);

/// "Nice" tick positions (1, 2, 5 x 10^k steps) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

}  // namespace ropekit
