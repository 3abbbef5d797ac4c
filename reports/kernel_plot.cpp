#include "reports/kernel_plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/number_text.hpp"

namespace ropekit {

const std::vector<KernelColumn>& plottable_kernel_columns() {
  using F = KernelColumn::Filled;
  static const std::vector<KernelColumn> columns = {
      {"kernel", "kernel Phi(Dp)", F::always},
      {"content_variance", "content variance", F::always},
      {"expected_kernel", "expected kernel E[Phi(Dp)]", F::rf_rope},
      {"frequency_variance", "frequency variance", F::rf_rope},
      {"sine_residual", "sine residual", F::plain_rope},
      {"continuum", "continuum kernel", F::plain_rope},
      {"continuum_sine", "continuum sine", F::plain_rope},
  };
  return columns;
}

std::string short_label(const std::string& text, std::size_t chars) {
  if (text.size() <= chars) return text;
  std::size_t end = chars - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a UTF-8 sequence
  return text.substr(0, end) + "...";
}

namespace {

std::string column_names() {
  std::string s;
  for (const auto& c : plottable_kernel_columns()) s += (s.empty() ? "" : ", ") + c.name;
  return s;
}

const std::string* axis_label(const std::string& column) {
  for (const auto& c : plottable_kernel_columns())
    if (c.name == column) return &c.label;
  return nullptr;
}

}  // namespace

std::pair<std::optional<double>, std::optional<double>> parse_plot_range(const std::string& text, const Where& where,
                                                                        const std::string& option) {
  const auto colon = text.find(':');
  const std::string constraint = "LO:HI, two numbers (either may be left out) with LO < HI";
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw_bad_value(where, option, text, constraint);
  std::optional<double> side[2];
  const std::string_view parts[2] = {std::string_view(text).substr(0, colon), std::string_view(text).substr(colon + 1)};
  for (int i = 0; i < 2; ++i) {
    const auto t = strip_blanks(parts[i]);
    if (t.empty()) continue;
    side[i] = parse_double(t);
    if (!side[i] || !std::isfinite(*side[i])) throw_bad_value(where, option, text, constraint);
  }
  if (side[0] && side[1] && !(*side[0] < *side[1])) throw_bad_value(where, option, text, constraint);
  return {side[0], side[1]};
}

std::pair<int, int> parse_plot_size(const std::string& text, const Where& where, const std::string& option) {
  const std::string constraint = "WIDTHxHEIGHT in pixels, each an integer in [200, 20000], e.g. 900x600";
  const auto x = text.find('x');
  if (x == std::string::npos) throw_bad_value(where, option, text, constraint);
  int v[2];
  const std::string_view parts[2] = {std::string_view(text).substr(0, x), std::string_view(text).substr(x + 1)};
  for (int i = 0; i < 2; ++i) {
    const auto n = parse_int(parts[i]);
    if (!n || *n < 200 || *n > 20000) throw_bad_value(where, option, text, constraint);
    v[i] = static_cast<int>(*n);
  }
  return {v[0], v[1]};
}

KernelPlot::KernelPlot(const KernelPlotSpec& spec, std::vector<std::string> labels,
                       const std::vector<std::string>& available, double lo, double hi, double lo_positive,
                       const Where& where)
    : spec_(spec), labels_(std::move(labels)) {
  if (!spec_.labels.empty()) {
    if (spec_.labels.size() != labels_.size())
      throw_bad_value(where, "plot_labels", fmt::format("'{}'", fmt::join(spec_.labels, ",")),
                      fmt::format("{} label(s), one per curve ({} given)", labels_.size(), spec_.labels.size()));
    for (std::size_t i = 0; i < spec_.labels.size(); ++i)
      if (std::find(spec_.labels.begin(), spec_.labels.begin() + static_cast<std::ptrdiff_t>(i), spec_.labels[i]) !=
          spec_.labels.begin() + static_cast<std::ptrdiff_t>(i))
        throw_bad_value(where, "plot_labels", "'" + spec_.labels[i] + "'", "distinct labels (given twice)");
    labels_ = spec_.labels;
  }
  PlotLine line = PlotLine::mean;
  if (spec_.line == "median") line = PlotLine::median;
  else if (spec_.line == "none") line = PlotLine::none;
  else if (spec_.line != "mean") throw_bad_value(where, "plot_line", spec_.line, "mean, median or none");
  if (spec_.columns.empty()) throw_bad_value(where, "plot_columns", "(none)", "one or more of " + column_names());
  for (const auto& c : spec_.columns) {
    if (!axis_label(c)) throw_bad_value(where, "plot_columns", c, "one of " + column_names());
    if (std::find(available.begin(), available.end(), c) == available.end())
      throw_bad_value(where, "plot_columns", c, "a column these encodings have (rf-rope: expected_kernel, "
                                                "frequency_variance; plain RoPE: sine_residual, continuum, continuum_sine)");
    if (std::count(spec_.columns.begin(), spec_.columns.end(), c) > 1)
      throw_bad_value(where, "plot_columns", c, "named once");
  }
  for (const auto& [c, range] : spec_.yrange)
    if (std::find(spec_.columns.begin(), spec_.columns.end(), c) == spec_.columns.end())
      throw_bad_value(where, "plot_yrange", c + "=...", "for a plotted column (--plot-columns)");
  for (const auto& c : spec_.log_y) {
    if (std::find(spec_.columns.begin(), spec_.columns.end(), c) == spec_.columns.end())
      throw_bad_value(where, "plot_log_y", c, "a plotted column (--plot-columns)");
    const auto r = spec_.yrange.find(c);
    if (r == spec_.yrange.end()) continue;
    const auto& [ylo, yhi] = r->second;
    if ((ylo && !(*ylo > 0)) || (yhi && !(*yhi > 0)))
      throw_bad_value(where, "plot_yrange",
                      fmt::format("{}={}:{}", c, ylo ? format_number(*ylo) : "", yhi ? format_number(*yhi) : ""),
                      "a range above 0 on a log axis (--plot-log-y)");
  }
  if (spec_.x_scale != "auto" && spec_.x_scale != "linear" && spec_.x_scale != "log")
    throw_bad_value(where, "plot_x", spec_.x_scale, "auto, linear or log");
  // The lag axis: the lags' range, or what --plot-xrange gives; log when asked, or (auto) when the positive lags
  // span more than two decades. A log axis starts at the smallest positive lag (lags <= 0 are noted, not drawn).
  const bool log = spec_.x_scale == "log" || (spec_.x_scale == "auto" && std::isfinite(lo_positive) && hi > 100 * lo_positive);
  if (log && !std::isfinite(lo_positive))
    throw_bad_value(where, "plot_x", "log", "used with a positive lag (a log axis draws lags > 0)");
  axis_ = XAxis{spec_.xmin.value_or(log ? lo_positive : lo), spec_.xmax.value_or(hi), log};
  if (log && !(axis_.lo > 0))
    throw_bad_value(where, "plot_xrange", fmt::format("{}:", format_number(axis_.lo)), "above 0 on a log lag axis");
  if (!(axis_.hi > axis_.lo)) {
    if (spec_.xmin || spec_.xmax)
      throw_bad_value(where, "plot_xrange", fmt::format("{}:{}", format_number(axis_.lo), format_number(axis_.hi)),
                      fmt::format("a range LO < HI that meets the lags [{}, {}]", format_number(lo), format_number(hi)));
    axis_ = axis_around(axis_.lo, axis_.hi, log);  // one lag: a span around it
  }
  FigureOptions layout;
  layout.width = spec_.width, layout.height = spec_.height, layout.title = title();
  try {
    check_figure_layout(layout, spec_.columns.size(), labels_);
  } catch (const std::invalid_argument& e) {
    throw_bad_value(where, "plot_size", fmt::format("{}x{}", spec_.width, spec_.height),
                    fmt::format("a size that fits the figure: {}", e.what()));
  }
  const int columns = plot_columns(spec_.width);
  envelopes_.assign(spec_.columns.size(),
                    std::vector<SeriesEnvelope>(labels_.size(), SeriesEnvelope(axis_, columns, line == PlotLine::median)));
  line_ = line;
}

void KernelPlot::add(std::size_t j, std::size_t column, double lag, double value) {
  envelopes_[column][j].add(lag, value);
}

Figure KernelPlot::finish() const {
  std::vector<PlotPanel> panels;
  for (std::size_t c = 0; c < spec_.columns.size(); ++c) {
    const std::string& name = spec_.columns[c];
    PlotPanel p;
    p.ylabel = *axis_label(name);
    p.log_y = std::find(spec_.log_y.begin(), spec_.log_y.end(), name) != spec_.log_y.end();
    if (const auto r = spec_.yrange.find(name); r != spec_.yrange.end()) p.ymin = r->second.first, p.ymax = r->second.second;
    // A curve with nothing in this panel (a column its encoding does not have, a window masking every lag) is left out.
    for (std::size_t j = 0; j < labels_.size(); ++j) {
      const auto& cols = envelopes_[c][j].columns();
      if (std::any_of(cols.begin(), cols.end(), [](const EnvelopeColumn& e) { return e.count > 0; }))
        p.series.push_back(EnvelopeSeries{labels_[j], envelopes_[c][j], "", 1.6, false});
    }
    panels.push_back(std::move(p));
  }
  FigureOptions o;
  o.width = spec_.width;
  o.height = spec_.height;
  o.xlabel = axis_.log ? "lag Dp (log scale)" : "lag Dp";
  o.title = title();
  o.line = line_;
  o.markers = spec_.markers;
  return svg_figure(axis_, panels, o);  // its layout and limits were checked by the constructor
}

// Default: the panels' quantities, "Kernel Phi(Dp) = tr G(Dp) / tr G(0) and content variance".
std::string KernelPlot::title() const {
  if (spec_.title) return *spec_.title;
  std::string t;
  for (std::size_t c = 0; c < spec_.columns.size(); ++c) {
    const std::string label = spec_.columns[c] == "kernel" ? "kernel Phi(Dp) = tr G(Dp) / tr G(0)" : *axis_label(spec_.columns[c]);
    t += (c == 0 ? "" : c + 1 == spec_.columns.size() ? " and " : ", ") + label;
  }
  t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
  return t;
}

}  // namespace ropekit
