#pragma once
// The figure of `ropekit kernel --plot`: one panel per chosen column (kernel, content variance, ...) over a shared
// lag axis, one curve per encoding, fed block by block as the rows stream out (memory: one envelope per curve and
// panel, whatever the number of lags).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ropekit/core/error.hpp"
#include "reports/plot.hpp"

namespace ropekit {

/// What the user asked of the figure (the command line's --plot-* options).
struct KernelPlotSpec {
  std::vector<std::string> columns = {"kernel", "content_variance"};  ///< one panel each, top to bottom
  std::optional<std::string> title;  ///< none: a title naming the columns; "": no title
  int width = 900, height = 0;       ///< 0: 300 px per panel plus the legend
  std::string x_scale = "auto";      ///< auto (log when the positive lags span more than two decades), linear, log
  std::optional<double> xmin, xmax;
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> yrange;  ///< by column
  std::vector<std::string> log_y;  ///< columns on a log y axis
  std::vector<std::string> labels;  ///< one per curve, distinct; empty: the default labels the command gives
  std::string line = "mean";        ///< what each curve's line follows: mean, median or none (the band only)
  std::vector<PlotMarker> markers;  ///< labelled vertical lines (original context, window) within the lag axis
};

/// A default legend label: the text itself, cut to `chars` characters with "..." where longer (the legend wraps what
/// is left; the table has the full spelling).
std::string short_label(const std::string& text, std::size_t chars = 160);

/// A numeric column of the kernel table: its name, its axis label, and which encodings fill it.
struct KernelColumn {
  enum class Filled { always, rf_rope, plain_rope };
  std::string name, label;
  Filled filled = Filled::always;
};
/// The kernel table's value columns in table order (after encoding and lag): every one a plot can draw.
const std::vector<KernelColumn>& plottable_kernel_columns();

/// "LO:HI", either side may be empty ("0:" or ":1"); `option` names it in errors.
/// @throws InputError for text that is not two numbers (or blanks) around one colon, or LO >= HI.
std::pair<std::optional<double>, std::optional<double>> parse_plot_range(const std::string& text, const Where& where,
                                                                        const std::string& option);

/// "WIDTHxHEIGHT" in pixels, each in [200, 20000].
/// @throws InputError otherwise.
std::pair<int, int> parse_plot_size(const std::string& text, const Where& where, const std::string& option);

class KernelPlot {
 public:
  /// `labels`: one per curve (encoding), replaced by spec.labels when given; `available`: the columns the table
  /// holds; lags seen span [lo, hi] with smallest positive lag `lo_positive` (infinity if none).
  /// @throws InputError naming the option for a column not plottable or not in the table, a range or scale the
  /// lags cannot show, labels not one per curve or repeated, a line other than mean, median or none.
  KernelPlot(const KernelPlotSpec& spec, std::vector<std::string> labels, const std::vector<std::string>& available,
             double lo, double hi, double lo_positive, const Where& where);
  const std::vector<std::string>& columns() const { return spec_.columns; }
  /// Adds curve `j`'s value of panel column `column` at `lag` (NaN: nothing there, the curve breaks).
  void add(std::size_t j, std::size_t column, double lag, double value);
  /// The figure (a panel with nothing to draw is drawn empty, with a note).
  Figure finish() const;

 private:
  std::string title() const;
  KernelPlotSpec spec_;
  XAxis axis_;
  std::vector<std::string> labels_;
  std::vector<std::vector<SeriesEnvelope>> envelopes_;  ///< [column][curve]
  PlotLine line_ = PlotLine::mean;
};

}  // namespace ropekit
