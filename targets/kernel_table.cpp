#include "targets/kernel_table.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

KernelTable parse_kernel_table(std::string_view text, std::string_view source, std::string_view where) {
  KernelTable t;
  t.source = std::string(source);
  std::vector<double> lags, values;
  bool header = false;
  std::size_t line_no = 0;
  auto fail = [&](const std::string& what) {
    throw InputError(fmt::format("{}: {} line {}: {}", where, bounded(std::string(source)), line_no, what));
  };
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const auto comma = line.find(',');
    if (comma == std::string_view::npos || line.find(',', comma + 1) != std::string_view::npos)
      fail(fmt::format("{} (must be two comma-separated fields{})", quote(line), header ? "" : ": lag,value"));
    const auto a = trim(line.substr(0, comma)), b = trim(line.substr(comma + 1));
    if (!header) {
      if (a != "lag" || b != "value") fail(fmt::format("header = {} (must be lag,value)", quote(line)));
      header = true;
      continue;
    }
    const auto lag = parse_double(a), value = parse_double(b);
    if (!lag || !std::isfinite(*lag) || *lag < 0) fail(fmt::format("lag = {} (must be a finite number >= 0)", quote(a)));
    if (!value || !std::isfinite(*value)) fail(fmt::format("value = {} (must be a finite number)", quote(b)));
    if (!(std::abs(*value) <= kMaxTableValue))
      fail(fmt::format("value = {} (must be at most {} in magnitude: the fits square and sum the values)",
                       format_number(*value), format_number(kMaxTableValue)));
    if (!lags.empty() && !(*lag > lags.back()))
      fail(fmt::format("lag = {} (must be greater than the lag before it, {}: lags are strictly increasing)",
                       format_number(*lag), format_number(lags.back())));
    lags.push_back(*lag);
    values.push_back(*value);
  }
  if (!header)
    throw InputError(fmt::format("{}: {}: header = none (must be lag,value, then the rows)", where, bounded(source)));
  if (lags.empty())
    throw InputError(fmt::format("{}: {}: rows = 0 (must be at least one after the header)", where, bounded(source)));
  t.lag = Eigen::Map<Eigen::VectorXd>(lags.data(), static_cast<Eigen::Index>(lags.size()));
  t.value = Eigen::Map<Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
  return t;
}

KernelTable read_kernel_table(const std::string& path, std::string_view where) {
  // read_file refuses it too, without the command's name (issue 20 item 14: "g.csv\0.zip" from Python read g.csv).
  if (const auto nul = path.find('\0'); nul != std::string::npos)
    throw InputError(fmt::format("{}: path = '{}\\x00...' (must be a path without NUL characters: the system reads "
                                 "only the part before one)",
                                 where, path.substr(0, std::min<std::size_t>(nul, 200))));
  return parse_kernel_table(read_file(path, "kernel table"), path, where);
}

}  // namespace ropekit
