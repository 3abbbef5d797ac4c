#pragma once
// Reading ropekit's SVG figures in tests: elements by their opening text, attributes, path points, text contents
// (a raised tspan read as "^k"), and the figure's structure (the golden comparison's lines).

#include <string>
#include <utility>
#include <vector>

#include "ropekit/core/number_text.hpp"

namespace ropekit::test {

/// Each element whose text starts with `open` (e.g. "<path class=\"envelope\""), up to its closing '>'.
inline std::vector<std::string> svg_elements(const std::string& svg, const std::string& open) {
  std::vector<std::string> out;
  for (auto p = svg.find(open); p != std::string::npos; p = svg.find(open, p + 1))
    out.push_back(svg.substr(p, svg.find('>', p) - p + 1));
  return out;
}

/// The value of attribute `name` in an element ("" if absent).
inline std::string svg_attr(const std::string& element, const std::string& name) {
  const auto p = element.find(" " + name + "=\"");
  if (p == std::string::npos) return "";
  const auto b = p + name.size() + 3;
  return element.substr(b, element.find('"', b) - b);
}

inline double svg_number(const std::string& element, const std::string& name) {
  return parse_double(svg_attr(element, name)).value();
}

/// The points of a path's d ("M x,y L x,y ... Z"), with the number of moves.
struct PathPoints {
  std::vector<std::pair<double, double>> points;
  int moves = 0;
};
inline PathPoints svg_path(const std::string& d) {
  PathPoints out;
  std::size_t i = 0;
  while (i < d.size()) {
    const char c = d[i];
    if (c == 'M' || c == 'L') {
      out.moves += c == 'M';
      const auto comma = d.find(',', i);
      auto end = d.find_first_of(" MLZ", comma + 1);
      if (end == std::string::npos) end = d.size();
      out.points.emplace_back(parse_double(d.substr(i + 1, comma - i - 1)).value(),
                              parse_double(d.substr(comma + 1, end - comma - 1)).value());
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

/// The contents of the text element starting at `p`, a raised tspan written "^k" ("10^3", "2x10^-4").
inline std::string svg_text_at(const std::string& svg, std::size_t p) {
  const auto b = svg.find('>', p) + 1, e = svg.find("</text>", b);
  const std::string inner = svg.substr(b, e - b);
  std::string plain;
  for (std::size_t i = 0; i < inner.size();) {
    if (inner.compare(i, 6, "<tspan") == 0) {
      plain += "^";
      i = inner.find('>', i) + 1;
    } else if (inner.compare(i, 8, "</tspan>") == 0) {
      i += 8;
    } else {
      plain += inner[i++];
    }
  }
  return plain;
}

/// The contents of every <text class="cls" ...>...</text>.
inline std::vector<std::string> svg_texts(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::string open = "<text class=\"" + cls + "\"";
  for (auto p = svg.find(open); p != std::string::npos; p = svg.find(open, p + 1)) out.push_back(svg_text_at(svg, p));
  return out;
}

/// The figure's structure without its coordinates: one line per element, "tag.class [data-*=...]" and, for text,
/// its contents (what a golden comparison holds: which panels, curves, ticks, labels and notes, in order).
inline std::string svg_structure(const std::string& svg) {
  std::string out;
  for (auto p = svg.find('<'); p != std::string::npos; p = svg.find('<', p + 1)) {
    if (svg[p + 1] == '/') continue;
    const auto end = svg.find('>', p);
    const std::string element = svg.substr(p, end - p + 1);
    const auto name_end = element.find_first_of(" />", 1);
    const std::string tag = element.substr(1, name_end - 1);
    if (tag == "tspan") continue;  // read with its text
    std::string line = tag;
    if (const auto cls = svg_attr(element, "class"); !cls.empty()) line += "." + cls;
    for (const char* data : {"data-ylabel", "data-label", "data-side"})
      if (const auto v = svg_attr(element, data); !v.empty()) line += std::string(" ") + data + "=" + v;
    if (tag == "text") line += " | " + svg_text_at(svg, p);
    out += line + "\n";
  }
  return out;
}

}  // namespace ropekit::test
