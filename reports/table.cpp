#include "reports/table.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <fmt/compile.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/escape.hpp"
#include "reports/npy.hpp"
#include "reports/output.hpp"
#include "ropekit/core/enum_text.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/overloaded.hpp"

namespace ropekit {

namespace {

std::string cell_text(const Cell& c, int digits) {
  return std::visit(Overloaded{
                        [](std::monostate) { return std::string(); },
                        [](const std::string& s) { return s; },
                        [&](double v) { return digits > 0 ? format_significant(v, digits) : format_number(v); },
                        [](std::int64_t v) { return std::to_string(v); },
                        [](bool b) { return std::string(b ? "true" : "false"); },
                    },
                    c);
}

std::string latex_escape(const std::string& in) {
  // The few non-ASCII symbols ropekit's reports use, spelled for a plain pdflatex preamble.
  static const std::pair<const char*, const char*> kSymbols[] = {
      {"†", "\\textsuperscript{\\dag}"}, {"γ", "$\\gamma$"}, {"ω", "$\\omega$"}, {"λ", "$\\lambda$"},
      {"²", "$^2$"}, {"³", "$^3$"}, {"ᵀ", "$^T$"}, {"—", "---"}, {"≥", "$\\geq$"}, {"≤", "$\\leq$"},
      {"·", "$\\cdot$"}, {"±", "$\\pm$"}};
  std::string s = in;
  std::string out;
  bool code = false;  // inside a Markdown `code span`: \texttt{...}
  for (std::size_t i = 0; i < s.size();) {
    bool replaced = false;
    for (const auto& [from, to] : kSymbols) {
      const std::size_t n = std::char_traits<char>::length(from);
      if (s.compare(i, n, from) == 0) {
        out += to;
        i += n;
        replaced = true;
        break;
      }
    }
    if (replaced) continue;
    const char c = s[i++];
    if (c == '`') {
      out += code ? "}" : "\\texttt{";
      code = !code;
      continue;
    }
    switch (c) {
      case '_': case '%': case '&': case '#': case '$': case '{': case '}': out += '\\'; out += c; break;
      case '^': out += "\\^{}"; break;
      case '~': out += "\\~{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += c;
    }
  }
  if (code) out += "}";
  return out;
}

}  // namespace

Table& Table::add_row(std::vector<Cell> row) {
  if (row.size() != columns.size())
    throw std::logic_error(fmt::format("Table::add_row: {} cells for {} columns", row.size(), columns.size()));
  rows.push_back(std::move(row));
  return *this;
}

std::size_t Table::column(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  throw std::out_of_range(fmt::format("no column '{}'", name));
}

namespace {
// The first word of each format is its name; "markdown" and "tex" are accepted aliases.
constexpr EnumTable<Format, 7> kFormats{{{Format::csv, "csv"},
                                         {Format::md, "md"},
                                         {Format::json, "json"},
                                         {Format::latex, "latex"},
                                         {Format::npy, "npy"},
                                         {Format::md, "markdown"},
                                         {Format::latex, "tex"}}};
}  // namespace

std::string_view format_name(Format format) { return to_text(kFormats, format); }

Format parse_format(std::string_view name) {
  if (auto f = from_text(kFormats, name)) return *f;
  throw_bad_value("ropekit", "format", fmt::format("'{}'", name), "one of csv, md, json, latex, npy");
}

// Appends a cell's CSV text to `out` without temporaries: a table of 10^4 rows renders in about a millisecond
// (fit's output; format_number's shortest round-trip text, formatted in place).
void append_csv_cell(fmt::memory_buffer& out, const Cell& c) {
  auto text = [&](std::string_view s) {
    if (s.find_first_of(",\"\n\r") == std::string_view::npos) return out.append(s);
    // Quoted, each '"' doubled: the text copied in runs up to each quote (a spelling on every row of 10^6: 14% of
    // a kernel table's time went to copying it character by character).
    out.push_back('"');
    for (std::size_t start = 0;;) {
      const std::size_t q = s.find('"', start);
      out.append(s.substr(start, q == std::string_view::npos ? std::string_view::npos : q + 1 - start));
      if (q == std::string_view::npos) break;
      out.push_back('"');
      start = q + 1;
    }
    out.push_back('"');
  };
  std::visit(Overloaded{
                 [](std::monostate) {},
                 [&](const std::string& v) { text(v); },
                 [&](double v) {
                   // Compiled format into the buffer's appender: the same shortest round-trip text as "{}", without
                   // parsing the format string per cell (CSV of 10^6 rows: formatting is most of the time).
                   if (std::isfinite(v)) fmt::format_to(fmt::appender(out), FMT_COMPILE("{}"), v);
                   else text(format_number(v));
                 },
                 [&](std::int64_t v) { fmt::format_to(fmt::appender(out), FMT_COMPILE("{}"), v); },
                 [&](bool b) { out.append(std::string_view(b ? "true" : "false")); },
             },
             c);
}

std::string csv_text(const Cell& c) {
  fmt::memory_buffer out;
  append_csv_cell(out, c);
  return fmt::to_string(out);
}

std::string to_csv(const Table& t) {
  fmt::memory_buffer out;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (i) out.push_back(',');
    append_csv_cell(out, Cell{t.columns[i]});
  }
  out.push_back('\n');
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i) out.push_back(',');
      append_csv_cell(out, row[i]);
    }
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

std::string to_markdown(const Table& t, const MarkdownOptions& o) {
  fmt::memory_buffer out;
  auto cell = [&](std::string_view s) {  // " s |", escaped where it holds '|', a control character or non-ASCII
    out.push_back(' ');
    const bool plain = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7F && c != '|'; });
    if (plain) out.append(s);
    else out.append(std::string_view(markdown_cell(s)));
    out.append(std::string_view(" |"));
  };
  out.push_back('|');
  for (const auto& c : t.columns) cell(c);
  out.append(std::string_view("\n|"));
  for (std::size_t i = 0; i < t.columns.size(); ++i) out.append(std::string_view("---|"));
  out.push_back('\n');
  for (const auto& row : t.rows) {
    out.push_back('|');
    for (const auto& c : row) {
      if (const auto* s = std::get_if<std::string>(&c)) cell(*s);
      else cell(cell_text(c, o.significant_digits));
    }
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

std::string to_json(const Table& t) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : t.rows) {
    nlohmann::ordered_json obj = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < row.size(); ++i) {
      std::visit(Overloaded{
                     [&](std::monostate) { obj[t.columns[i]] = nullptr; },
                     [&](const std::string& s) { obj[t.columns[i]] = s; },
                     [&](double v) {
                       // JSON has no NaN/inf: they become null rather than invalid JSON.
                       if (std::isfinite(v)) obj[t.columns[i]] = v; else obj[t.columns[i]] = nullptr;
                     },
                     [&](std::int64_t v) { obj[t.columns[i]] = v; },
                     [&](bool b) { obj[t.columns[i]] = b; },
                 },
                 row[i]);
    }
    rows.push_back(std::move(obj));
  }
  return rows.dump(1) + "\n";
}

std::string to_latex(const Table& t, const MarkdownOptions& o) {
  std::string out = "\\begin{tabular}{" + std::string(t.columns.size(), 'l') + "}\n\\toprule\n";
  for (std::size_t i = 0; i < t.columns.size(); ++i) out += (i ? " & " : "") + latex_escape(t.columns[i]);
  out += " \\\\\n\\midrule\n";
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size(); ++i)
      out += (i ? " & " : "") + latex_escape(cell_text(row[i], o.significant_digits));
    out += " \\\\\n";
  }
  return out + "\\bottomrule\n\\end{tabular}\n";
}

std::string render(const Table& t, Format format) {
  switch (format) {
    case Format::csv: return to_csv(t);
    case Format::md: return to_markdown(t);
    case Format::json: return to_json(t);
    case Format::latex: return to_latex(t);
    case Format::npy: return npy_table_bytes(t);
  }
  throw std::logic_error("render: unknown format");
}

CsvData parse_csv(std::string_view text, std::string_view source) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c, line += (c == '\n');
      continue;
    }
    if (c == '"') quoted = true, any = true;
    else if (c == ',') record.push_back(std::move(field)), field.clear(), any = true;
    else if (c == '\r') continue;
    else if (c == '\n') {
      ++line;
      if (any || !field.empty()) record.push_back(std::move(field)), records.push_back(std::move(record));
      record.clear(), field.clear(), any = false;
    } else field += c, any = true;
  }
  if (quoted) throw InputError(fmt::format("{}: unterminated quote (line {})", source, line));
  if (any || !field.empty()) record.push_back(std::move(field)), records.push_back(std::move(record));
  if (records.empty()) throw InputError(fmt::format("{}: empty CSV (must have a header line)", source));
  CsvData out;
  out.columns = std::move(records.front());
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != out.columns.size())
      throw InputError(fmt::format("{}: row {} has {} cells (must have {}, as the header)", source, r + 1,
                                   records[r].size(), out.columns.size()));
    out.rows.push_back(std::move(records[r]));
  }
  return out;
}

namespace {
constexpr std::string_view kLatexFoot = "\\bottomrule\n\\end{tabular}\n";
}  // namespace

struct TableStream::State {
  OutputStream out;
  Format format;
  std::vector<std::string> columns;
  std::string empty;  // render() of the table without rows: its head and foot (text formats)
  bool any = false;   // a block with rows written
  std::optional<NpyTableWriter> npy;  // npy: the rows spilled until finish() (the header needs their count)
  State(const std::string& path, Format f, std::vector<std::string> c)
      : out(path), format(f), columns(std::move(c)), empty(f == Format::npy ? "" : render(Table{columns, {}}, f)) {
    if (f == Format::npy) npy.emplace(columns);
  }
};

TableStream::TableStream(const std::string& path, Format format, std::vector<std::string> columns)
    : state_(std::make_unique<State>(path, format, std::move(columns))) {}

TableStream::~TableStream() = default;

void TableStream::add(const Table& block) {
  if (block.rows.empty()) return;
  if (block.columns != state_->columns) throw std::logic_error("TableStream::add: other columns");
  if (state_->npy) return state_->npy->add(block);
  const std::string text = render(block, state_->format);
  std::string_view piece = text;
  // render() of one block is head + rows + foot: write the head once, the rows always, the foot in finish().
  switch (state_->format) {
    case Format::csv:
    case Format::md:
      if (state_->any) piece.remove_prefix(state_->empty.size());
      break;
    case Format::latex:
      if (state_->any) piece.remove_prefix(state_->empty.size() - kLatexFoot.size());
      piece.remove_suffix(kLatexFoot.size());
      break;
    case Format::json:  // "[\n" rows "\n]\n"; blocks joined by ",\n"
      piece.remove_suffix(3);
      piece.remove_prefix(2);
      if (state_->any) state_->out.write(",\n");
      else state_->out.write("[\n");
      break;
    case Format::npy: break;  // spilled above
  }
  state_->out.write(piece);
  state_->any = true;
}

void TableStream::finish() {
  if (state_->npy) {
    state_->npy->finish([&](std::string_view piece) { state_->out.write(piece); });
    return state_->out.commit();
  }
  if (!state_->any) state_->out.write(state_->empty);
  else if (state_->format == Format::latex) state_->out.write(kLatexFoot);
  else if (state_->format == Format::json) state_->out.write("\n]\n");
  state_->out.commit();
}

}  // namespace ropekit
