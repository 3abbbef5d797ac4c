#include "reports/plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "reports/escape.hpp"

namespace ropekit {

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr double kLeft = 84, kRight = 24, kGap = 14, kAxis = 46, kRow = 18, kNoteRow = 15;
constexpr int kDefaultPanel = 300, kMinPanel = 60;
constexpr const char* kMinus = "\u2212";

std::string signed_text(const std::string& s) { return !s.empty() && s[0] == '-' ? kMinus + s.substr(1) : s; }

// 10^k with k raised (a tspan shifted up, which every SVG renderer draws).
std::string power_label(int k, const std::string& mantissa = "") {
  return fmt::format("{}10<tspan dy=\"-6\" font-size=\"9\">{}</tspan>", mantissa.empty() ? "" : mantissa + "\u00d7",
                     signed_text(std::to_string(k)));
}

// A linear tick's label: as many decimals as the step needs; m x 10^k beyond 10^6 or below 10^-3.
std::string linear_label(double v, double step) {
  if (v == 0) v = 0;  // -0 prints as 0
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) {
    const int k = static_cast<int>(std::floor(std::log10(a)));
    const int d = std::max(0, static_cast<int>(std::ceil(-std::log10(step / std::pow(10.0, k)) - 1e-9)));
    const std::string m = signed_text(fmt::format("{:.{}f}", v / std::pow(10.0, k), d));
    return m == "1" ? power_label(k) : m == kMinus + std::string("1") ? kMinus + power_label(k) : power_label(k, m);
  }
  const int d = std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  return signed_text(fmt::format("{:.{}f}", v, d));
}

struct Tick {
  double at;  ///< in axis units (log10 of the value on a log axis)
  std::string label;
};

struct Ticks {
  std::vector<Tick> major;
  std::vector<double> minor;  ///< unlabelled, axis units
};

Ticks axis_ticks(double lo, double hi, bool log, int target) {
  Ticks t;
  if (!log) {
    const auto v = nice_ticks(lo, hi, target);
    const double step = v.size() > 1 ? v[1] - v[0] : std::max(std::fabs(lo), 1e-300);
    for (double x : v) t.major.push_back({x, linear_label(x, step)});
    return t;
  }
  // Decades 10^k, every s-th where there are many; 2..9 x 10^k between them as minor ticks.
  const int k0 = static_cast<int>(std::ceil(lo - 1e-9)), k1 = static_cast<int>(std::floor(hi + 1e-9));
  const int s = std::max(1, (k1 - k0 + target) / std::max(1, target));
  for (int k = k0; k <= k1; ++k)
    if (k % s == 0) t.major.push_back({static_cast<double>(k), power_label(k)});  // 10^0 among them when in range
  const bool few = t.major.size() < 2;
  for (int k = static_cast<int>(std::floor(lo)); k <= static_cast<int>(std::ceil(hi)); ++k)
    for (int m = 2; m <= 9; ++m) {
      const double at = k + std::log10(static_cast<double>(m));
      if (at < lo - 1e-9 || at > hi + 1e-9) continue;
      // Within about a decade the 2 and 5 multiples are labelled too (a plain number), else minor.
      if (few && (m == 2 || m == 5)) t.major.push_back({at, linear_label(m * std::pow(10.0, k), std::pow(10.0, k))});
      else if (s == 1 && k1 - k0 <= 8) t.minor.push_back(at);
    }
  std::sort(t.major.begin(), t.major.end(), [](const Tick& a, const Tick& b) { return a.at < b.at; });
  return t;
}

// A column's values on the panel's y axis (log10 on a log axis); drawable when it has a value there. `mean` is
// where the line goes: the column's mean (geometric on a log axis) or, for PlotLine::median, its median.
struct ColumnY {
  bool drawable = false;
  double x = 0, mean = 0, lo = 0, hi = 0;
};

ColumnY column_y(const EnvelopeColumn& c, bool log_y, PlotLine line = PlotLine::mean) {
  ColumnY y;
  if (c.count == 0 || (log_y && c.positive == 0)) return y;
  y.drawable = true;
  y.x = c.x_sum / static_cast<double>(c.count);
  if (log_y) y.mean = c.log_sum / static_cast<double>(c.positive), y.lo = std::log10(c.min_positive), y.hi = std::log10(c.max);
  else y.mean = c.y_sum / static_cast<double>(c.count), y.lo = c.min, y.hi = c.max;
  if (line == PlotLine::median) {
    const double m = column_median(c, log_y);
    y.mean = log_y ? std::log10(m) : m;
  }
  return y;
}

// Where a panel sits and what its axes span: pixels of data coordinates.
struct PanelFrame {
  const XAxis& x;
  std::size_t index;  ///< the panel's number (its clip path)
  double y0, width, height, ylo, yhi;
  double px(double data_x) const { return kLeft + x.position(data_x) * width; }
  double py(double axis_y) const { return y0 + (1 - (axis_y - ylo) / (yhi - ylo)) * height; }
};

// One curve of a panel: per run of drawable columns a band (min to max) where a column holds several points, then
// the line through the means; a lone column is a dot (with its min-max bar). Then bars on the frame's edge over
// the columns whose values go beyond a given y limit. Returns whether it drew a band (for the legend's swatch).
bool draw_curve(std::string& svg, const EnvelopeSeries& s, const PlotPanel& p, const PanelFrame& f,
                const std::string& color, double width, bool dashed, PlotLine mode) {
  const auto& cols = s.envelope.columns();
  std::vector<std::vector<ColumnY>> runs(1);
  for (const auto& c : cols) {
    const ColumnY y = column_y(c, p.log_y, mode);
    if (y.drawable) runs.back().push_back(y);
    else if ((c.gap || c.count > 0) && !runs.back().empty()) runs.emplace_back();  // a break: nothing drawable here
  }
  std::string band, line, dots;
  for (const auto& run : runs) {
    if (run.empty()) continue;
    const bool spread =
        std::any_of(run.begin(), run.end(), [&](const ColumnY& y) { return f.py(y.lo) - f.py(y.hi) >= 0.5; });
    if (run.size() == 1) {
      dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.2\"/>", f.px(run[0].x), f.py(run[0].mean));
      if (spread) band += fmt::format("M{0:.1f},{1:.1f} L{0:.1f},{2:.1f} ", f.px(run[0].x), f.py(run[0].hi), f.py(run[0].lo));
      continue;
    }
    if (spread) {
      for (std::size_t i = 0; i < run.size(); ++i) band += fmt::format("{}{:.1f},{:.1f} ", i ? "L" : "M", f.px(run[i].x), f.py(run[i].hi));
      for (std::size_t i = run.size(); i-- > 0;) band += fmt::format("L{:.1f},{:.1f} ", f.px(run[i].x), f.py(run[i].lo));
      band += "Z ";
    }
    if (mode != PlotLine::none || !spread)  // band only: a run without a band keeps its line (it is the data)
      for (std::size_t i = 0; i < run.size(); ++i) line += fmt::format("{}{:.1f},{:.1f} ", i ? "L" : "M", f.px(run[i].x), f.py(run[i].mean));
  }
  svg += fmt::format("<g class=\"series\" data-label=\"{}\" clip-path=\"url(#panel{})\">", xml_escape(s.label), f.index);
  if (!band.empty())
    svg += fmt::format("<path class=\"envelope\" d=\"{}\" fill=\"{}\" fill-opacity=\"0.22\" stroke=\"{}\" "
                       "stroke-opacity=\"0.22\" stroke-width=\"0.6\"/>", band, color, color);
  if (!line.empty())
    svg += fmt::format("<path class=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}/>",
                       mode == PlotLine::median ? "median" : "mean", line, color, width,
                       dashed ? " stroke-dasharray=\"6 3\"" : "");
  if (!dots.empty()) svg += fmt::format("<g fill=\"{}\">{}</g>", color, dots);
  svg += "</g>\n";
  for (const bool above : {true, false}) {
    const auto& limit = above ? p.ymax : p.ymin;
    if (!limit) continue;
    auto beyond = [&](std::size_t j) { return cols[j].count > 0 && (above ? cols[j].max > *limit : cols[j].min < *limit); };
    std::string marks;
    for (std::size_t i = 0; i < cols.size();) {
      if (!beyond(i)) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < cols.size() && beyond(j)) ++j;
      marks += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"4\"/>", kLeft + static_cast<double>(i),
                           above ? f.y0 - 4 : f.y0 + f.height, static_cast<double>(j - i));
      i = j;
    }
    if (!marks.empty())
      svg += fmt::format("<g class=\"clipped\" data-side=\"{}\" fill=\"{}\">{}</g>\n", above ? "above" : "below", color, marks);
  }
  return !band.empty();
}

std::string number_text(double v) { return signed_text(fmt::format("{:.4g}", v)); }

struct PanelRange {
  double lo, hi;  ///< axis units
};

// The panel's y range in axis units, and its notes on values it cannot show.
PanelRange panel_range(const PlotPanel& p, std::vector<std::string>& notes) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : p.series) {
    std::int64_t nonpositive = 0;
    double above = -INFINITY, below = INFINITY;
    for (const auto& c : s.envelope.columns()) {
      nonpositive += c.count - c.positive;
      const ColumnY y = column_y(c, p.log_y);
      if (!y.drawable) continue;
      lo = std::min(lo, y.lo), hi = std::max(hi, y.hi);
      if (p.ymax && c.max > *p.ymax) above = std::max(above, c.max);
      if (p.ymin && c.min < *p.ymin) below = std::min(below, c.min);
    }
    if (p.log_y && nonpositive > 0)
      notes.push_back(fmt::format("{} (log axis): {} value(s) <= 0 of {} not drawn", p.ylabel, nonpositive, s.label));
    if (std::isfinite(above))
      notes.push_back(fmt::format("{}: {} goes above the y range (up to {}; marked on the frame's top edge)", p.ylabel,
                                  s.label, number_text(above)));
    if (std::isfinite(below))
      notes.push_back(fmt::format("{}: {} goes below the y range (down to {}; marked on the frame's bottom edge)",
                                  p.ylabel, s.label, number_text(below)));
  }
  if (!std::isfinite(lo)) {  // an empty panel is drawn with its note, not refused (the rows may be out already)
    notes.push_back(fmt::format("{}: nothing to draw{}", p.ylabel, p.log_y ? " (a log axis draws values > 0 only)" : ""));
    lo = 0, hi = 1;
  }
  auto axis = [&](double v) { return p.log_y ? std::log10(v) : v; };
  for (const auto* given : {&p.ymin, &p.ymax})
    if (*given && !(std::isfinite(**given) && (!p.log_y || **given > 0)))
      throw std::invalid_argument(fmt::format("panel '{}': y limit {} is not on the axis{}", p.ylabel, **given,
                                              p.log_y ? " (a log axis needs > 0)" : ""));
  if (p.ymin && p.ymax && !(*p.ymin < *p.ymax))
    throw std::invalid_argument(fmt::format("panel '{}': y range [{}, {}] is empty", p.ylabel, *p.ymin, *p.ymax));
  // Padding on the sides the data decides: 4% of the span, or a fixed amount for a flat curve; a side the data
  // would put beyond the given one is a span (or a decade) away from it.
  const double span = hi - lo, pad = span > 0 ? 0.04 * span : p.log_y ? 0.5 : lo != 0 ? 0.1 * std::fabs(lo) : 1;
  PanelRange r{p.ymin ? axis(*p.ymin) : lo - pad, p.ymax ? axis(*p.ymax) : hi + pad};
  const double mag = std::max(std::fabs(r.lo), std::fabs(r.hi));
  const double step = p.log_y ? 1 : span > 0 ? span : mag > 0 ? 0.1 * mag : 1;
  if (!(r.hi > r.lo)) (p.ymin ? r.hi : r.lo) = (p.ymin ? r.lo + step : r.hi - step);
  return r;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) t.push_back(std::fabs(v) < 1e-12 * step ? 0 : v);
  return t;
}

int plot_columns(int width) { return width - static_cast<int>(kLeft + kRight); }

namespace {
// Characters as a reader counts them (UTF-8 continuation bytes are not): the legend's width estimate.
std::size_t utf8_chars(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}
}  // namespace

std::vector<std::string> wrap_label(const std::string& label, std::size_t chars) {
  std::vector<std::string> lines;
  std::string_view rest = label;
  chars = std::max<std::size_t>(chars, 2);
  while (utf8_chars(rest) > chars) {
    // The byte where `chars` characters end, never inside a UTF-8 sequence.
    std::size_t end = 0;
    for (std::size_t n = 0; end < rest.size() && n < chars; ++n)
      do ++end;
      while (end < rest.size() && (rest[end] & 0xC0) == 0x80);
    std::size_t cut = end;
    for (std::size_t i = end; i > end / 2; --i)
      if (rest[i - 1] == ',' || rest[i - 1] == ' ' || rest[i - 1] == ':') {
        cut = i;
        break;
      }
    std::string_view line = rest.substr(0, cut);
    while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
    lines.emplace_back(line);
    rest.remove_prefix(cut);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  }
  if (!rest.empty() || lines.empty()) lines.emplace_back(rest);
  return lines;
}

namespace {
// Legend entries side by side: as many columns of the longest label (about 6.6 px a character at 12 px, after the
// 36 px swatch, 20 px apart) as the plot's width holds, at most 4.
// Labels longer than the plot's width are wrapped (wrap_label) so that the legend stays inside the figure; a grid
// row is as many text lines high as its longest entry.
struct LegendGrid {
  std::size_t columns = 1, rows = 0;  ///< rows: text lines in all
  double step = 0;  ///< px between columns
  std::vector<std::vector<std::string>> lines;  ///< per label, its wrapped lines
  std::vector<double> row_y;                    ///< per label, its first line's offset in rows from the legend's top
};
LegendGrid legend_grid(const std::vector<std::string>& labels, double pw) {
  LegendGrid g;
  const auto chars = static_cast<std::size_t>(std::max(8.0, std::floor((pw - 36) / 6.6)));
  std::size_t longest = 0;
  for (const auto& l : labels) {
    g.lines.push_back(wrap_label(l, chars));
    for (const auto& line : g.lines.back()) longest = std::max(longest, utf8_chars(line));
  }
  g.step = 56 + 6.6 * static_cast<double>(longest);
  g.columns = std::clamp<std::size_t>(static_cast<std::size_t>(pw / g.step), 1, 4);
  for (std::size_t first = 0; first < labels.size(); first += g.columns) {
    std::size_t height = 1;
    for (std::size_t i = first; i < std::min(labels.size(), first + g.columns); ++i) {
      g.row_y.push_back(static_cast<double>(g.rows));
      height = std::max(height, g.lines[i].size());
    }
    g.rows += height;
  }
  return g;
}

struct Layout {
  double top, panel, height;  ///< the title's band, each panel's height, the height without notes
};
// Title, panels with gaps, the x axis, the legend; notes (what the figure cannot show) add lines below.
Layout figure_layout(const FigureOptions& o, std::size_t panels, const std::vector<std::string>& labels) {
  const std::size_t legend_rows = legend_grid(labels, plot_columns(o.width)).rows;
  const double np = static_cast<double>(panels), top = o.title.empty() ? 14 : 40;
  const double legend = legend_rows == 0 ? 0 : 10 + kRow * static_cast<double>(legend_rows);
  const double fixed = top + kGap * (np - 1) + kAxis + legend + 8;
  const double height = o.height > 0 ? o.height : fixed + kDefaultPanel * np;
  const double panel = (height - fixed) / np;
  if (panel < kMinPanel)
    throw std::invalid_argument(fmt::format("height {} px leaves {:.0f} px per panel for {} panel(s) and {} legend row(s) "
                                            "(at least {})", o.height, panel, panels, legend_rows, kMinPanel));
  return {top, panel, height};
}
}  // namespace

void check_figure_layout(const FigureOptions& o, std::size_t panels, const std::vector<std::string>& labels) {
  if (plot_columns(o.width) < 100)
    throw std::invalid_argument(fmt::format("width {} px leaves {} px for the data (at least 100)", o.width, plot_columns(o.width)));
  if (panels == 0) throw std::invalid_argument("a figure needs a panel");
  (void)figure_layout(o, panels, labels);
}

Figure svg_figure(const XAxis& x, const std::vector<PlotPanel>& panels, const FigureOptions& o) {
  check_figure_layout(o, panels.size(), {});
  const int columns = plot_columns(o.width);
  // Colours by label, in order of first appearance: a label keeps its colour (and one legend row) in every panel.
  std::vector<std::string> labels;
  std::map<std::string, std::string> color_of;
  std::map<std::string, std::pair<double, bool>> stroke_of;
  for (const auto& p : panels)
    for (const auto& s : p.series) {
      if (static_cast<int>(s.envelope.columns().size()) != columns || s.envelope.axis().lo != x.lo ||
          s.envelope.axis().hi != x.hi || s.envelope.axis().log != x.log)
        throw std::invalid_argument(fmt::format("series '{}' is not on the figure's x axis", s.label));
      if (o.line == PlotLine::median && !s.envelope.medians())
        throw std::invalid_argument(fmt::format("series '{}' keeps no medians for a median line", s.label));
      if (color_of.count(s.label)) continue;
      labels.push_back(s.label);
      color_of[s.label] = s.color.empty() ? kPalette[(labels.size() - 1) % 10] : s.color;
      stroke_of[s.label] = {s.width, s.dashed};
    }
  Figure fig;
  // Points off the x axis (outside its range, or <= 0 on a log axis): once per curve, or once for all alike.
  std::map<std::string, std::int64_t> outside;
  for (const auto& p : panels)
    for (const auto& s : p.series) outside[s.label] = std::max(outside[s.label], s.envelope.outside());
  const std::int64_t first = labels.empty() ? 0 : outside[labels.front()];
  const bool alike = std::all_of(outside.begin(), outside.end(), [&](const auto& kv) { return kv.second == first; });
  const std::string off = fmt::format("outside the x range [{}, {}]{} not drawn", number_text(x.lo), number_text(x.hi),
                                      x.log ? " or <= 0 on its log axis" : "");
  if (alike && first > 0)
    fig.notes.push_back(fmt::format("{} point(s) of {} {}", first, labels.size() > 1 ? "each curve" : labels.front(), off));
  for (const auto& label : labels)
    if (!alike && outside[label] > 0) fig.notes.push_back(fmt::format("{} point(s) of {} {}", outside[label], label, off));
  std::vector<PanelRange> ranges;
  for (const auto& p : panels) ranges.push_back(panel_range(p, fig.notes));
  std::map<std::string, bool> banded;

  const Layout l = figure_layout(o, panels.size(), labels);
  const double top = l.top, ph = l.panel, pw = columns;
  const double height = l.height + (fig.notes.empty() ? 0 : 6 + kNoteRow * static_cast<double>(fig.notes.size()));
  const double xlo = x.log ? std::log10(x.lo) : x.lo, xhi = x.log ? std::log10(x.hi) : x.hi;
  auto px = [&](double u) { return kLeft + u * pw; };  // u: position along the axis in [0, 1]
  const Ticks xt = axis_ticks(xlo, xhi, x.log, 8);

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1:.0f}\" viewBox=\"0 0 {0} {1:.0f}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      o.width, height);
  if (!o.title.empty())
    svg += fmt::format("<text class=\"title\" x=\"{:.1f}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
                       kLeft + pw / 2, xml_escape(o.title));
  double bottom = top;
  for (std::size_t k = 0; k < panels.size(); ++k) {
    const PlotPanel& p = panels[k];
    const double y0 = top + static_cast<double>(k) * (ph + kGap), ylo = ranges[k].lo, yhi = ranges[k].hi;
    bottom = y0 + ph;
    auto py = [&](double v) { return y0 + (1 - (v - ylo) / (yhi - ylo)) * ph; };
    svg += fmt::format("<g class=\"panel\" data-ylabel=\"{}\">\n<defs><clipPath id=\"panel{}\"><rect x=\"{}\" y=\"{:.1f}\" "
                       "width=\"{}\" height=\"{:.1f}\"/></clipPath></defs>\n",
                       xml_escape(p.ylabel), k, kLeft, y0, pw, ph);
    // Grid, ticks and their labels (x labels under the last panel only).
    const Ticks yt = axis_ticks(ylo, yhi, p.log_y, std::max(3, static_cast<int>(ph / 55)));
    for (const auto& t : yt.major)
      svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#e8e8e8\"/>"
                         "<text class=\"ytick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                         kLeft, kLeft + pw, py(t.at), kLeft - 6, py(t.at) + 4, t.label);
    for (double m : yt.minor)
      svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n", kLeft, kLeft + 4, py(m));
    const bool last = k + 1 == panels.size();
    for (const auto& t : xt.major) {
      const double at = px((t.at - xlo) / (xhi - xlo));
      svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#e8e8e8\"/>\n", at, y0, y0 + ph);
      if (last)
        svg += fmt::format("<text class=\"xtick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", at,
                           y0 + ph + 17, t.label);
    }
    for (double m : xt.minor)
      svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n",
                         px((m - xlo) / (xhi - xlo)), y0 + ph - 4, y0 + ph);
    svg += fmt::format("<text class=\"ylabel\" transform=\"translate(16 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                       y0 + ph / 2, xml_escape(p.ylabel));
    for (std::size_t i = 0; i < o.vlines.size(); ++i) {
      const double at = px(x.position(o.vlines[i]));
      if (!(at >= kLeft && at <= kLeft + pw)) continue;
      svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#555\" "
                         "stroke-dasharray=\"2 3\"/>\n", at, y0, y0 + ph);
      if (i == 0 && k == 0 && !o.vline_label.empty())
        svg += fmt::format("<text class=\"marker\" x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\">{}</text>\n", at + 4, y0 + 14, xml_escape(o.vline_label));
    }
    // Labelled markers: a line in every panel, the label in the first, one text row each (below vline_label's),
    // left of the line where it sits in the plot's right third (so that the text stays inside the figure).
    for (std::size_t i = 0; i < o.markers.size(); ++i) {
      const double at = px(x.position(o.markers[i].at));
      if (!(at >= kLeft && at <= kLeft + pw)) continue;
      svg += fmt::format("<line class=\"marker\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                         "stroke=\"#555\" stroke-dasharray=\"2 3\"/>\n", at, y0, y0 + ph);
      const bool left = at > kLeft + 0.7 * pw;
      if (k == 0 && !o.markers[i].label.empty())
        svg += fmt::format("<text class=\"marker\" x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\"{}>{}</text>\n",
                           left ? at - 4 : at + 4, y0 + 14 + 13 * static_cast<double>(i + (o.vline_label.empty() ? 0 : 1)),
                           left ? " text-anchor=\"end\"" : "", xml_escape(o.markers[i].label));
    }
    for (const auto& s : p.series) {
      const auto [width, dashed] = stroke_of[s.label];
      banded[s.label] =
          draw_curve(svg, s, p, PanelFrame{x, k, y0, pw, ph, ylo, yhi}, color_of[s.label], width, dashed, o.line) ||
          banded[s.label];
    }
    svg += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#333\"/>\n</g>\n", kLeft, y0,
                       pw, ph);
  }
  svg += fmt::format("<text class=\"xlabel\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", kLeft + pw / 2,
                     bottom + 38, xml_escape(o.xlabel));
  // The legend below the axis, in a grid: per label its line (over a band swatch where the curve has a band).
  const LegendGrid grid = legend_grid(labels, pw);
  double ly = bottom + kAxis + 10;
  svg += "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& label = labels[i];
    const auto [width, dashed] = stroke_of[label];
    const double lx = kLeft + grid.step * static_cast<double>(i % grid.columns);
    const double y = ly + kRow * grid.row_y[i];
    if (banded[label])
      svg += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"28\" height=\"10\" fill=\"{}\" fill-opacity=\"0.22\"/>", lx,
                         y - 5, color_of[label]);
    // A long label wrapped: its further lines as tspans one row down, under its first.
    std::string text = xml_escape(grid.lines[i][0]);
    for (std::size_t r = 1; r < grid.lines[i].size(); ++r)
      text += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", lx + 36, kRow, xml_escape(grid.lines[i][r]));
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"{4}\"{5}/>"
                       "<text class=\"legend-label\" x=\"{6}\" y=\"{7:.1f}\">{8}</text>\n",
                       lx, lx + 28, y, color_of[label], width, dashed ? " stroke-dasharray=\"6 3\"" : "", lx + 36, y + 4,
                       text);
  }
  ly += kRow * static_cast<double>(grid.rows);
  svg += "</g>\n";
  ly += 4;
  for (const auto& n : fig.notes) {
    svg += fmt::format("<text class=\"note\" x=\"{}\" y=\"{:.1f}\" fill=\"#666\" font-size=\"11\">{}</text>\n", kLeft, ly + 4,
                       xml_escape(n));
    ly += kNoteRow;
  }
  fig.svg = svg + "</svg>\n";
  return fig;
}

std::string svg_line_plot(const std::vector<PlotSeries>& series, const PlotOptions& o) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : series) {
    if (s.x.size() != s.y.size()) throw std::invalid_argument("svg_line_plot: x and y lengths differ in " + s.label);
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && (!o.log_x || s.x[i] > 0) && (!o.log_y || s.y[i] > 0))
        lo = std::min(lo, s.x[i]), hi = std::max(hi, s.x[i]);
  }
  if (!std::isfinite(lo)) throw std::invalid_argument("svg_line_plot: no drawable point");
  const XAxis x = axis_around(o.xmin.value_or(lo), o.xmax.value_or(hi), o.log_x);
  PlotPanel p;
  p.ylabel = o.ylabel, p.log_y = o.log_y, p.ymin = o.ymin, p.ymax = o.ymax;
  for (const auto& s : series) {
    EnvelopeSeries e{s.label, SeriesEnvelope(x, plot_columns(o.width)), s.color, s.width, s.dashed};
    e.envelope.add(s.x, s.y);
    p.series.push_back(std::move(e));
  }
  FigureOptions f;
  f.title = o.title, f.xlabel = o.xlabel, f.width = o.width, f.height = o.height, f.vlines = o.vlines,
  f.vline_label = o.vline_label;
  return svg_figure(x, {p}, f).svg;
}

}  // namespace ropekit
