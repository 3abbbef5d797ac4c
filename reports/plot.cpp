#include "reports/plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace ropekit {

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string tick_label(double v, bool log) {
  if (log) return fmt::format("1e{}", static_cast<int>(std::lround(v)));
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.0e}", v);
  return fmt::format("{}", std::round(v * 1e6) / 1e6);
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

std::string svg_line_plot(const std::vector<PlotSeries>& series, const PlotOptions& o) {
  const double left = 70, right = 20, top = 40, bottom = 50;
  const double pw = o.width - left - right, ph = o.height - top - bottom;
  auto ty = [&](double y) { return o.log_y ? (y > 0 ? std::log10(y) : std::numeric_limits<double>::quiet_NaN()) : y; };
  auto tx = [&](double x) { return o.log_x ? (x > 0 ? std::log10(x) : std::numeric_limits<double>::quiet_NaN()) : x; };

  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& s : series) {
    if (s.x.size() != s.y.size()) throw std::invalid_argument("svg_line_plot: x and y lengths differ in " + s.label);
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      const double x = tx(s.x[i]), y = ty(s.y[i]);
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xlo = std::min(xlo, x), xhi = std::max(xhi, x);
      ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  }
  if (!std::isfinite(xlo) || !std::isfinite(ylo)) throw std::invalid_argument("svg_line_plot: no finite point");
  if (o.ymin) ylo = ty(*o.ymin);
  if (o.ymax) yhi = ty(*o.ymax);
  if (o.log_y) ylo = std::floor(ylo), yhi = std::ceil(yhi);
  if (o.log_x) xlo = std::floor(xlo), xhi = std::ceil(xhi);
  if (yhi <= ylo) yhi = ylo + 1;
  if (xhi <= xlo) xhi = xlo + 1;
  auto px = [&](double x) { return left + (x - xlo) / (xhi - xlo) * pw; };
  auto py = [&](double y) { return top + (1 - (y - ylo) / (yhi - ylo)) * ph; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<defs><clipPath id=\"plot\"><rect x=\"{2}\" y=\"{3}\" width=\"{4}\" height=\"{5}\"/></clipPath></defs>\n"
      "<text x=\"{6}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{7}</text>\n",
      o.width, o.height, left, top, pw, ph, left + pw / 2, xml_escape(o.title));
  // Grid, ticks and labels.
  const auto yt = o.log_y ? nice_ticks(ylo, yhi, static_cast<int>(std::min(10.0, yhi - ylo))) : nice_ticks(ylo, yhi);
  for (double v : yt)
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\" stroke=\"#e5e5e5\"/>"
                       "<text x=\"{3}\" y=\"{4:.2f}\" text-anchor=\"end\">{5}</text>\n",
                       left, left + pw, py(v), left - 6, py(v) + 4, tick_label(v, o.log_y));
  const auto xt = o.log_x ? nice_ticks(xlo, xhi, static_cast<int>(std::min(10.0, xhi - xlo))) : nice_ticks(xlo, xhi, 8);
  for (double v : xt)
    svg += fmt::format("<line x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#e5e5e5\"/>"
                       "<text x=\"{0:.2f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                       px(v), top, top + ph, top + ph + 16, tick_label(v, o.log_x));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", left, top,
                     pw, ph);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, o.height - 12,
                     xml_escape(o.xlabel));
  svg += fmt::format("<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     top + ph / 2, xml_escape(o.ylabel));
  for (std::size_t i = 0; i < o.vlines.size(); ++i) {
    svg += fmt::format("<line x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#555\" stroke-dasharray=\"2 3\"/>\n",
                       px(tx(o.vlines[i])), top, top + ph);
    if (i == 0 && !o.vline_label.empty())
      svg += fmt::format("<text x=\"{:.2f}\" y=\"{}\" fill=\"#555\">{}</text>\n", px(tx(o.vlines[i])) + 4, top + 14,
                         xml_escape(o.vline_label));
  }
  // Series, clipped to the plot area; a non-finite point starts a new segment.
  std::size_t palette = 0;
  // The legend box: 260 px, wider for long labels (about 6.6 px per character at 12 px), at most the plot's width.
  std::size_t longest = 0;
  for (const auto& s : series) longest = std::max(longest, s.label.size());
  const double lw = std::min(pw, std::max(260.0, 44 + 6.6 * static_cast<double>(longest)));
  std::string legend;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const std::string color = s.color.empty() ? kPalette[palette++ % 10] : s.color;
    std::string d;
    bool pen = false;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      const double x = tx(s.x[i]), y = ty(s.y[i]);
      if (!std::isfinite(x) || !std::isfinite(y)) {
        pen = false;
        continue;
      }
      d += fmt::format("{}{:.2f},{:.2f}", pen ? " L" : (d.empty() ? "M" : " M"), px(x), py(y));
      pen = true;
    }
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} clip-path=\"url(#plot)\"/>\n",
                       d, color, s.width, s.dashed ? " stroke-dasharray=\"6 3\"" : "");
    // Legend box in the lower right corner of the plot area.
    const double lx = left + pw - lw - 4, ly = top + ph - 16 * static_cast<double>(series.size()) - 4 + 16 * static_cast<double>(k);
    legend += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"{4}\"{5}/>"
                          "<text x=\"{6}\" y=\"{7:.1f}\">{8}</text>\n",
                          lx + 6, lx + 30, ly, color, s.width, s.dashed ? " stroke-dasharray=\"6 3\"" : "",
                          lx + 36, ly + 4, xml_escape(s.label));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n",
                     left + pw - lw - 4, top + ph - 16 * static_cast<double>(series.size()) - 16, lw, 16 * series.size() + 8);
  svg += legend + "</svg>\n";
  return svg;
}

}  // namespace ropekit
