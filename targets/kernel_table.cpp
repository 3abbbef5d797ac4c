#include "targets/kernel_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
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

// The key of a selection item "key=value" (a name of letters, digits and '_' before '='), or empty.
std::string_view selector_key(std::string_view item) {
  std::size_t n = 0;
  while (n < item.size() && (std::isalnum(static_cast<unsigned char>(item[n])) || item[n] == '_')) ++n;
  return n > 0 && n < item.size() && item[n] == '=' ? item.substr(0, n) : std::string_view{};
}

}  // namespace

namespace {

// The fields of one CSV record (RFC 4180: quoted fields may hold commas and doubled quotes; no newlines here).
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  for (auto& f : out) f = std::string(trim(f));
  return out;
}

}  // namespace

KernelTable parse_kernel_table(std::string_view text, std::string_view source, std::string_view where,
                               const TableSelect& select) {
  KernelTable t;
  t.source = std::string(source);
  std::vector<double> lags, values;
  std::vector<std::string> header;
  std::size_t lag_col = 0, value_col = 1, enc_col = std::string::npos, line_no = 0;
  std::vector<std::string> encodings_seen;
  auto fail = [&](const std::string& what) {
    throw InputError(fmt::format("{}: {} line {}: {}", where, bounded(std::string(source)), line_no, what));
  };
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> f = csv_fields(line);
    if (header.empty()) {
      header = f;
      auto find = [&](std::string_view name) {
        const auto it = std::find(header.begin(), header.end(), name);
        return it == header.end() ? std::string::npos : static_cast<std::size_t>(it - header.begin());
      };
      if (header.size() < 2 || find("lag") == std::string::npos)
        fail(fmt::format("header = {} (must be lag,value, or a table with a lag column such as ropekit kernel's)",
                         quote(line)));
      lag_col = find("lag");
      const std::string want = !select.column.empty() ? select.column
                               : find("value") != std::string::npos ? "value"
                                                                     : "kernel";
      value_col = find(want);
      if (value_col == std::string::npos || value_col == lag_col)
        fail(fmt::format("header = {} (must have the column '{}'{})", quote(line), want,
                         select.column.empty() ? ": value, or kernel; FILE#column=NAME picks another" : ""));
      enc_col = find("encoding");
      if (!select.encoding.empty() && enc_col == std::string::npos)
        fail(fmt::format("header = {} (must have an encoding column: encoding={} was asked for)", quote(line),
                         select.encoding));
      continue;
    }
    if (f.size() != header.size())
      fail(fmt::format("{} (must be {} comma-separated fields, as the header{})", quote(line), header.size(),
                       header.size() == 2 ? ": lag,value" : ""));
    if (enc_col != std::string::npos) {
      const std::string& e = f[enc_col];
      if (!select.encoding.empty() && e != select.encoding) continue;
      if (std::find(encodings_seen.begin(), encodings_seen.end(), e) == encodings_seen.end())
        encodings_seen.push_back(e);
      if (encodings_seen.size() > 1)
        fail(fmt::format("encoding = {} after {} (must be one encoding's rows: FILE#encoding=SPELLING picks them)",
                         quote(bounded(e)), quote(bounded(encodings_seen.front()))));
    }
    const std::string_view a = f[lag_col], b = f[value_col];
    if (b.empty() && header.size() > 2) continue;  // a lag the layer's window masks: no kernel value there
    const auto lag = parse_double(a), value = parse_double(b);
    if (!lag || !std::isfinite(*lag) || *lag < 0) fail(fmt::format("lag = {} (must be a finite number >= 0)", quote(a)));
    if (!value || !std::isfinite(*value))
      fail(fmt::format("{} = {} (must be a finite number)", header[value_col], quote(b)));
    if (!(std::abs(*value) <= kMaxTableValue))
      fail(fmt::format("value = {} (must be at most {} in magnitude: the fits square and sum the values)",
                       format_number(*value), format_number(kMaxTableValue)));
    if (!lags.empty() && !(*lag > lags.back()))
      fail(fmt::format("lag = {} (must be greater than the lag before it, {}: lags are strictly increasing)",
                       format_number(*lag), format_number(lags.back())));
    lags.push_back(*lag);
    values.push_back(*value);
  }
  if (header.empty())
    throw InputError(fmt::format("{}: {}: header = none (must be lag,value, then the rows)", where, bounded(source)));
  if (lags.empty())
    throw InputError(fmt::format("{}: {}: rows = 0 (must be at least one after the header{})", where, bounded(source),
                                 select.encoding.empty() ? "" : " with encoding " + select.encoding));
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
  // FILE#column=NAME,encoding=SPELLING: the selection after the last '#' when it starts with "key=" (a spelling holds
  // commas, so encoding= takes the rest of the text). An unknown key is refused naming it and the known ones (it was
  // read as part of the file name and reported as a missing file), unless the whole text names an existing file.
  std::string file = path;
  TableSelect select;
  const auto hash = path.rfind('#');
  if (hash != std::string::npos) {
    std::string_view rest = std::string_view(path).substr(hash + 1);
    const std::string_view first = selector_key(rest);
    const bool known = first == "column" || first == "encoding";
    if (known || (!first.empty() && !std::filesystem::exists(path))) {
      file = path.substr(0, hash);
      while (!rest.empty()) {
        const std::string_view key = selector_key(rest);
        if (key == "encoding") {
          select.encoding = std::string(rest.substr(9));
          break;
        }
        if (key != "column")
          throw InputError(fmt::format("{}: selector = {} in {} (must be column or encoding, as in "
                                       "FILE#column=NAME[,encoding=SPELLING])",
                                       where, quote(bounded(std::string(key.empty() ? rest : key))),
                                       quote(bounded(path))));
        const auto comma = rest.find(',');
        select.column = std::string(rest.substr(7, comma == std::string_view::npos ? rest.npos : comma - 7));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
    }
  }
  return parse_kernel_table(read_file(file, "kernel table"), file, where, select);
}

}  // namespace ropekit
