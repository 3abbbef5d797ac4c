#include "reports/shard.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"

namespace ropekit {

namespace {

// The header line's comment markers per format (JSON has no comments: a '#' line, as CSV's).
struct Marker {
  const char* open;
  const char* close;
};
Marker marker(Format f) {
  switch (f) {
    case Format::md: return {"<!-- ropekit-shard ", " -->"};
    case Format::latex: return {"% ropekit-shard ", ""};
    default: return {"# ropekit-shard ", ""};
  }
}

// Increasing positions as ranges "0-3,12-15,20".
std::string encode_positions(const std::vector<std::size_t>& rows) {
  std::string out;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j + 1 < rows.size() && rows[j + 1] == rows[j] + 1) ++j;
    out += (out.empty() ? "" : ",") +
           (j == i ? std::to_string(rows[i]) : fmt::format("{}-{}", rows[i], rows[j]));
    i = j + 1;
  }
  return out;
}

bool read_size(std::string_view s, std::size_t& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// nullopt-like: false on a malformed list, positions that do not increase, or more than `cap` positions (the
// header's row count, itself bounded by the rows the file holds): a hand-edited range cannot allocate gigabytes.
bool decode_positions(std::string_view text, std::vector<std::size_t>& rows, std::size_t cap) {
  rows.clear();
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const auto dash = item.find('-');
    std::size_t a = 0, b = 0;
    if (!read_size(item.substr(0, dash), a)) return false;
    b = a;
    if (dash != std::string_view::npos && !read_size(item.substr(dash + 1), b)) return false;
    if (b < a || (!rows.empty() && a <= rows.back()) || b - a >= cap - rows.size() || rows.size() >= cap) return false;
    for (std::size_t v = a; v <= b; ++v) rows.push_back(v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return false;
  }
  return true;
}

[[noreturn]] void bad_file(const std::string& name, std::string_view value, std::string_view constraint) {
  throw_bad_value("ropekit merge", "'" + name + "'", value, constraint);
}

// A shard's table text cut into what every shard shares (head, tail) and one text per row.
struct Body {
  std::string head, tail;
  std::vector<std::string> rows;
};

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') {
      out.push_back(text.substr(start, i + 1 - start));
      start = i + 1;
    }
  return out;
}

Body split_body(const ShardHeader& h, std::string_view text, const std::string& name) {
  const char* cut = "the file is truncated or was edited";
  if (text.empty() || text.back() != '\n')
    bad_file(name, text.empty() ? "a shard without its table" : "a table whose last line is cut",
             fmt::format("a complete {} table after the shard header: {}", format_name(h.format), cut));
  Body b;
  switch (h.format) {
    case Format::csv: {
      // Records end at a newline outside quotes (a quoted cell may hold one).
      bool quoted = false;
      std::size_t start = 0;
      std::vector<std::string_view> records;
      for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '"') quoted = !quoted;
        else if (text[i] == '\n' && !quoted) {
          records.push_back(text.substr(start, i + 1 - start));
          start = i + 1;
        }
      }
      if (quoted) bad_file(name, "a CSV table with an unterminated quote", fmt::format("a complete table: {}", cut));
      b.head = std::string(records.front());
      for (std::size_t i = 1; i < records.size(); ++i) b.rows.emplace_back(records[i]);
      break;
    }
    case Format::md: {
      const auto lines = lines_of(text);
      if (lines.size() < 2 || lines[1].rfind("|---|", 0) != 0)
        bad_file(name, "a Markdown table without its header and rule lines", fmt::format("a complete table: {}", cut));
      b.head = std::string(lines[0]) + std::string(lines[1]);
      for (std::size_t i = 2; i < lines.size(); ++i) b.rows.emplace_back(lines[i]);
      break;
    }
    case Format::latex: {
      const auto lines = lines_of(text);
      if (lines.size() < 6 || lines[0].rfind("\\begin{tabular}", 0) != 0 || lines[lines.size() - 2] != "\\bottomrule\n" ||
          lines.back() != "\\end{tabular}\n")
        bad_file(name, "a LaTeX tabular without its first four or last two lines",
                 fmt::format("a complete tabular: {}", cut));
      for (std::size_t i = 0; i < 4; ++i) b.head += lines[i];
      b.tail = std::string(lines[lines.size() - 2]) + std::string(lines.back());
      for (std::size_t i = 4; i + 2 < lines.size(); ++i) b.rows.emplace_back(lines[i]);
      break;
    }
    case Format::json: {
      // The writer's layout (nlohmann dump with indent 1): "[", then each row object from a line " {" to a line
      // " }" (" }," between rows), then "]"; an empty table is "[]". Parsing first catches any damage.
      nlohmann::json doc;
      try {
        doc = nlohmann::json::parse(text);
      } catch (const nlohmann::json::exception&) {
        bad_file(name, "a table that is not valid JSON", fmt::format("a complete JSON array of rows: {}", cut));
      }
      if (!doc.is_array()) bad_file(name, "a JSON value that is not an array", "a JSON array of rows");
      if (text == "[]\n") break;
      const auto lines = lines_of(text);
      std::string row;
      for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
        std::string_view l = lines[i];
        const bool last = l == " }\n" || l == " },\n" || l == " {}\n" || l == " {},\n";
        if (last && l[l.size() - 2] == ',') l = l.substr(0, l.size() - 2), row += l, row += '\n';
        else row += l;
        if (last) b.rows.push_back(std::move(row)), row.clear();
      }
      if (!row.empty() || b.rows.size() != doc.size())
        bad_file(name, "a JSON table not in ropekit's layout", "one row object per ' {' ... ' }' block, as written");
      break;
    }
    case Format::npy:  // shards are text (fit's --format); a header naming npy is refused where it is read
      bad_file(name, "an npy table", "a csv, md, json or latex shard");
  }
  if (b.rows.size() != h.rows.size())
    bad_file(name, fmt::format("{} rows", b.rows.size()),
             fmt::format("{}, as its shard header lists: {}", h.rows.size(), cut));
  return b;
}

ShardHeader read_header(const ShardText& f) {
  const auto eol = f.text.find('\n');
  const std::string line = f.text.substr(0, eol);
  std::string payload;
  Format format = Format::csv;
  bool found = false;
  for (Format candidate : {Format::csv, Format::md, Format::latex}) {
    const Marker m = marker(candidate);
    const std::string open = m.open, close = m.close;
    if (line.rfind(open, 0) == 0 && line.size() >= open.size() + close.size() &&
        line.compare(line.size() - close.size(), close.size(), close) == 0) {
      payload = line.substr(open.size(), line.size() - open.size() - close.size());
      format = candidate;
      found = true;
      break;
    }
  }
  if (eol == std::string::npos && line.find("ropekit-shard") != std::string::npos)
    bad_file(f.name, "a shard header cut short", "a whole shard header line: the file is truncated");
  if (!found || eol == std::string::npos)
    bad_file(f.name, "a file without a shard header",
             "a shard: its first line '# ropekit-shard {...}' (md: '<!-- ropekit-shard ... -->', latex: '% ...'), "
             "written by fit or verify with --shard i/n");
  ShardHeader h;
  try {
    const auto j = nlohmann::json::parse(payload);
    h.shard = parse_shard(j.at("shard").get<std::string>(), "shard header");
    h.format = parse_format(j.at("format").get<std::string>());
    h.run = j.at("run").get<std::string>();
    h.inputs = j.at("inputs").get<std::string>();
    h.version = j.at("version").get<std::string>();
    // Counts are non-negative integers; a shard holds at most one row per byte of its file.
    const auto& total = j.at("total_rows");
    const auto& count = j.at("rows");
    if (!total.is_number_unsigned() || !count.is_number_unsigned()) throw InputError("counts");
    h.total_rows = total.get<std::size_t>();
    const std::size_t n_rows = count.get<std::size_t>();
    if (n_rows > f.text.size() || n_rows > h.total_rows) throw InputError("rows");
    if (!decode_positions(j.at("positions").get<std::string>(), h.rows, n_rows) || h.rows.size() != n_rows ||
        (!h.rows.empty() && h.rows.back() >= h.total_rows))
      throw InputError("positions");
    const auto& digest = j.at("digest");
    if (!digest.is_string()) throw InputError("digest");
    h.digest = digest.get<std::string>();
  } catch (const std::exception&) {
    bad_file(f.name, "a damaged shard header", "the header line as --shard wrote it");
  }
  // The comment marker must be the format's own (a JSON shard's header is a '#' line as CSV's).
  const Format marked = h.format == Format::json ? Format::csv : h.format;
  if (marked != format) bad_file(f.name, "a damaged shard header", "the header line as --shard wrote it");
  return h;
}

}  // namespace

Shard parse_shard(std::string_view text, const std::string& command) {
  const std::string value = "'" + std::string(text) + "'";
  const auto slash = text.find('/');
  std::size_t i = 0, n = 0;
  if (slash == std::string_view::npos || !read_size(text.substr(0, slash), i) || !read_size(text.substr(slash + 1), n))
    throw_bad_value(command, "--shard", value,
                    "i/n: shard i of n, i counted from 0, e.g. 0/4, 1/4, 2/4 and 3/4 (Slurm: "
                    "--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT with --array=0-3)");
  if (n < 1 || n > static_cast<std::size_t>(kMaxShards))
    throw_bad_value(command, "--shard", value, fmt::format("i/n with n in [1, {}]", kMaxShards));
  if (i >= n)
    throw_bad_value(command, "--shard", value,
                    fmt::format("i/n with i < n: shards are counted from 0, so {} shards are 0/{} to {}/{}", n, n,
                                n - 1, n));
  return Shard{static_cast<std::int64_t>(i), static_cast<std::int64_t>(n)};
}

std::pair<std::size_t, std::size_t> shard_range(std::size_t items, Shard s) {
  const auto n = static_cast<std::size_t>(s.count), i = static_cast<std::size_t>(s.index);
  // First items % n shards take one more.
  const std::size_t base = items / n, extra = items % n;
  const std::size_t first = i * base + std::min(i, extra);
  return {first, first + base + (i < extra ? 1 : 0)};
}

std::vector<std::size_t> shard_items(const std::vector<double>& costs, Shard s) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(static_cast<std::size_t>(s.count), 0.0);
  std::vector<std::size_t> mine;
  for (std::size_t item : order) {
    const auto to = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[to] += costs[item];
    if (to == static_cast<std::size_t>(s.index)) mine.push_back(item);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

ShardHeader shard_header(Shard shard, Format format, std::string run, std::string version, std::size_t total_rows,
                         std::vector<std::size_t> rows) {
  ShardHeader h;
  h.shard = shard;
  h.format = format;
  h.run = std::move(run);
  for (const auto& in : input_files_read())
    h.inputs += fmt::format("{}{}:{:016x}", h.inputs.empty() ? "" : " ", in.what, in.digest);
  h.version = std::move(version);
  h.total_rows = total_rows;
  h.rows = std::move(rows);
  return h;
}

std::string shard_file(const ShardHeader& h, const Table& table) {
  if (table.rows.size() != h.rows.size())
    throw std::logic_error(fmt::format("shard_file: {} rows for {} positions", table.rows.size(), h.rows.size()));
  nlohmann::ordered_json j;
  j["shard"] = fmt::format("{}/{}", h.shard.index, h.shard.count);
  j["format"] = std::string(format_name(h.format));
  j["run"] = h.run;
  j["inputs"] = h.inputs;
  j["version"] = h.version;
  j["total_rows"] = h.total_rows;
  j["rows"] = h.rows.size();
  j["positions"] = encode_positions(h.rows);
  // The rows as written: merge refuses a shard whose table was edited or whose rows were moved.
  const std::string body = render(table, h.format);
  j["digest"] = fmt::format("{:016x}", fnv1a64(body));
  const Marker m = marker(h.format);
  return m.open + j.dump() + m.close + "\n" + body;
}

std::string merge_shards(const std::vector<ShardText>& files) {
  if (files.empty()) throw InputError("ropekit merge: no shard files given (must give the n files of a run's shards)");
  std::vector<ShardHeader> headers;
  std::vector<Body> bodies;
  for (const auto& f : files) {
    headers.push_back(read_header(f));
    const std::string_view body = std::string_view(f.text).substr(f.text.find('\n') + 1);
    bodies.push_back(split_body(headers.back(), body, f.name));  // a cut table is named by its row count first
    if (fmt::format("{:016x}", fnv1a64(body)) != headers.back().digest)
      bad_file(f.name, "a shard whose table differs from the one it was written with",
               "the table as --shard wrote it (its header's digest no longer matches: rows edited or moved)");
  }
  const ShardHeader& ref = headers.front();
  const std::string& ref_name = files.front().name;
  std::map<std::int64_t, std::size_t> by_index;
  for (std::size_t k = 0; k < files.size(); ++k) {
    const ShardHeader& h = headers[k];
    const std::string& name = files[k].name;
    auto same = [&](bool equal, const std::string& what, const std::string& mine, const std::string& theirs) {
      if (!equal)
        bad_file(name, fmt::format("a shard with {} {}", what, mine),
                 fmt::format("a shard of the same run as '{}' ({} {}): shards differ only in --shard, --out and --threads",
                             ref_name, what, theirs));
    };
    same(h.format == ref.format, "format", std::string(format_name(h.format)), std::string(format_name(ref.format)));
    same(h.run == ref.run, "command", "'" + h.run + "'", "'" + ref.run + "'");
    same(h.inputs == ref.inputs, "input files", "'" + h.inputs + "'", "'" + ref.inputs + "'");
    same(h.version == ref.version, "ropekit version", h.version, ref.version);
    same(h.shard.count == ref.shard.count, "shard count", std::to_string(h.shard.count),
         std::to_string(ref.shard.count));
    same(h.total_rows == ref.total_rows, "row count", std::to_string(h.total_rows), std::to_string(ref.total_rows));
    same(bodies[k].head == bodies.front().head && bodies[k].tail == bodies.front().tail, "table header",
         "'" + bodies[k].head.substr(0, bodies[k].head.find('\n')) + "'",
         "'" + bodies.front().head.substr(0, bodies.front().head.find('\n')) + "'");
    const auto [it, fresh] = by_index.emplace(h.shard.index, k);
    if (!fresh)
      bad_file(name, fmt::format("shard {}/{}", h.shard.index, h.shard.count),
               fmt::format("given once: '{}' is shard {}/{} too", files[it->second].name, h.shard.index,
                           h.shard.count));
  }
  if (static_cast<std::int64_t>(by_index.size()) != ref.shard.count) {
    std::string given, missing;
    for (std::int64_t i = 0; i < ref.shard.count; ++i) {
      std::string& list = by_index.count(i) ? given : missing;
      if (list.size() < 200) list += fmt::format("{}{}/{}", list.empty() ? "" : ", ", i, ref.shard.count);
    }
    throw_bad_value("ropekit merge", "shards", given,
                    fmt::format("all {} shards of the run: missing {}", ref.shard.count, missing));
  }
  // Every position of the unsharded table exactly once (headers written by --shard always tile it). The shards'
  // rows must add up to the run's count before a table of that size is made.
  std::size_t held = 0;
  for (const auto& h : headers) held += h.rows.size();
  if (held != ref.total_rows)
    throw_bad_value("ropekit merge", "rows", fmt::format("{} in the shards", held),
                    fmt::format("the run's {} rows, as the shard headers state (a damaged header)", ref.total_rows));
  std::vector<const std::string*> rows(ref.total_rows, nullptr);
  for (std::size_t k = 0; k < files.size(); ++k)
    for (std::size_t r = 0; r < headers[k].rows.size(); ++r) {
      const std::size_t pos = headers[k].rows[r];
      if (rows[pos])
        bad_file(files[k].name, fmt::format("a shard holding row {}", pos), "rows no other shard holds (a damaged header)");
      rows[pos] = &bodies[k].rows[r];
    }
  for (std::size_t pos = 0; pos < rows.size(); ++pos)
    if (!rows[pos])
      throw_bad_value("ropekit merge", "rows", fmt::format("row {} in no shard", pos),
                      "every row of the run in one shard (a damaged header)");

  std::string out;
  if (ref.format == Format::json) {
    if (rows.empty()) return "[]\n";
    out = "[\n";
    for (std::size_t pos = 0; pos < rows.size(); ++pos) {
      out += *rows[pos];
      if (pos + 1 < rows.size()) out.insert(out.size() - 1, ",");
    }
    return out + "]\n";
  }
  out = bodies.front().head;
  for (const auto* r : rows) out += *r;
  return out + bodies.front().tail;
}

}  // namespace ropekit
