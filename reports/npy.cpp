// NumPy .npy v1.0 writer (npy.hpp).
#include "reports/npy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "ropekit/core/overloaded.hpp"
#include "reports/output.hpp"

namespace ropekit {

namespace {

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xff);
}

void put_f8(std::string& out, double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, 8);
  put_le(out, bits, 8);
}

// The file's start for the header dict `dict`: magic, version, the header's length, the dict padded with spaces
// and ended by '\n' so that the data starts at a multiple of 64 bytes (numpy's alignment); format 1.0 (a 2-byte
// length), 2.0 (4 bytes) when the header would pass 65535 bytes.
std::string npy_header(std::string dict) {
  const bool v2 = dict.size() + 12 + 64 > 65535;
  const std::size_t lead = v2 ? 12 : 10;
  dict.append((64 - (lead + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  put_le(out, dict.size(), v2 ? 4 : 2);
  return out + dict;
}

}  // namespace

std::string npy_bytes(const Eigen::VectorXd& v) {
  std::string out = npy_header(fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({},), }}", v.size()));
  out.reserve(out.size() + 8 * static_cast<std::size_t>(v.size()));
  for (Eigen::Index i = 0; i < v.size(); ++i) put_f8(out, v[i]);
  return out;
}

void write_npy(const std::string& path, const Eigen::VectorXd& v) { write_file_atomic(path, npy_bytes(v)); }

namespace {

// A spilled cell: its kind and 8 bytes (a double's or an integer's bits, a boolean, a text's index in its column's
// list of distinct texts).
enum class Kind : std::uint64_t { empty, text, real, integer, boolean };
struct Spilled {
  Kind kind;
  std::uint64_t bits;
};

// What a column's cells were, over every row: its field type follows (see npy.hpp).
struct ColumnKinds {
  bool text = false, real = false, integer = false, boolean = false, empty = false;
  std::size_t width = 1;  // the longest text in bytes, for '|S' (numpy has no '|S0')
  std::vector<std::string> texts;
  std::unordered_map<std::string, std::uint64_t> index;
};

// A field name or text as a Python string literal in the header.
std::string py_literal(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      continue;
    }
    out += c;
  }
  return out + "'";
}

// Where temporaries go: $TMPDIR, as the user points scratch space there, else /tmp (std::tmpfile took /tmp always).
std::string temporary_dir() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

// A file without a name in temporary_dir(): O_TMPFILE where the file system has it, else a name removed at once.
std::FILE* unnamed_temporary() {
  const std::string dir = temporary_dir();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    std::string name = dir + "/ropekit-npy-XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(name.c_str());
  }
  if (fd < 0) return nullptr;
  std::FILE* f = ::fdopen(fd, "w+b");
  if (!f) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
  }
  return f;
}

}  // namespace

struct NpyTableWriter::State {
  std::vector<std::string> columns;
  std::vector<ColumnKinds> kinds;
  std::vector<Spilled> held;  // the cells not yet in the temporary file
  std::FILE* spill = nullptr;  // opened when `held` passes kHeldCells
  std::uint64_t rows = 0;
  std::size_t held_cells = 0;  // at most this many in memory
  void spill_held() {
    if (!spill) spill = unnamed_temporary();  // removed by the system when closed, or when the process ends
    if (!spill) fail();
    if (!held.empty() && std::fwrite(held.data(), sizeof(Spilled), held.size(), spill) != held.size()) fail();
    held.clear();
  }
  ~State() {
    if (spill) std::fclose(spill);
  }
  [[noreturn]] static void fail() {
    throw InputError(fmt::format("cannot write a temporary file for the .npy table in '{}': {}", temporary_dir(),
                                 std::strerror(errno)));
  }
};

NpyTableWriter::NpyTableWriter(std::vector<std::string> columns, std::size_t held_cells)
    : s_(std::make_unique<State>()) {
  s_->held_cells = held_cells;
  s_->kinds.resize(columns.size());
  s_->columns = std::move(columns);
}

NpyTableWriter::~NpyTableWriter() = default;

void NpyTableWriter::add(const Table& block) {
  if (block.columns != s_->columns) throw std::logic_error("NpyTableWriter::add: other columns");
  std::vector<Spilled>& cells = s_->held;
  for (const auto& row : block.rows) {
    for (std::size_t j = 0; j < row.size(); ++j) {
      ColumnKinds& k = s_->kinds[j];
      Spilled c{Kind::empty, 0};
      std::visit(Overloaded{
                     [&](std::monostate) { k.empty = true; },
                     [&](const std::string& v) {
                       k.text = true;
                       auto [it, added] = k.index.try_emplace(v, k.texts.size());
                       if (added) {
                         k.texts.push_back(v);
                         k.width = std::max(k.width, v.size());
                       }
                       c = {Kind::text, it->second};
                     },
                     [&](double v) {
                       k.real = true;
                       std::memcpy(&c.bits, &v, 8);
                       c.kind = Kind::real;
                     },
                     [&](std::int64_t v) {
                       k.integer = true;
                       c = {Kind::integer, static_cast<std::uint64_t>(v)};
                     },
                     [&](bool v) {
                       k.boolean = true;
                       c = {Kind::boolean, v ? 1u : 0u};
                     },
                 },
                 row[j]);
      cells.push_back(c);
    }
  }
  s_->rows += block.rows.size();
  if (cells.size() > s_->held_cells) s_->spill_held();
}

void NpyTableWriter::finish(const std::function<void(std::string_view)>& sink) {
  State& s = *s_;
  const std::size_t ncol = s.columns.size();
  // The field types, and the text of a column's non-text cells where the column is text.
  enum class Field { f8, i8, b1, u };
  std::vector<Field> field(ncol);
  for (std::size_t j = 0; j < ncol; ++j) {
    ColumnKinds& k = s.kinds[j];
    if (k.text) {
      field[j] = Field::u;
    } else if (k.boolean && !k.real && !k.integer && !k.empty) {
      field[j] = Field::b1;
    } else if (k.integer && !k.real && !k.boolean && !k.empty) {
      field[j] = Field::i8;
    } else {
      field[j] = Field::f8;  // reals, mixed numbers, or empty cells (NaN)
    }
  }
  // Numbers in a text column are written as CSV writes them (table.hpp's csv_text): their texts' widths are needed
  // before the header, so a first pass over the spill measures them.
  auto number_text = [](Spilled c) -> std::string {
    switch (c.kind) {
      case Kind::real: {
        double v;
        std::memcpy(&v, &c.bits, 8);
        return csv_text(Cell{v});
      }
      case Kind::integer: return csv_text(Cell{static_cast<std::int64_t>(c.bits)});
      case Kind::boolean: return csv_text(Cell{c.bits != 0});
      default: return "";
    }
  };
  const std::size_t chunk_rows = std::max<std::size_t>(1, (std::size_t{1} << 16) / std::max<std::size_t>(ncol, 1));
  // visit(n, cells) for each chunk of n rows, from memory or read back from the temporary file.
  if (s.spill) s.spill_held();
  std::vector<Spilled> chunk(s.spill ? chunk_rows * ncol : 0);
  auto each_chunk = [&](auto visit) {
    if (s.spill && (std::fflush(s.spill) != 0 || std::fseek(s.spill, 0, SEEK_SET) != 0)) State::fail();
    for (std::uint64_t r0 = 0; r0 < s.rows; r0 += chunk_rows) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_rows, s.rows - r0));
      const Spilled* cells = s.held.data() + r0 * ncol;
      if (s.spill) {
        if (std::fread(chunk.data(), sizeof(Spilled), n * ncol, s.spill) != n * ncol) State::fail();
        cells = chunk.data();
      }
      visit(n, cells);
    }
  };
  bool numbers_in_text = false;
  for (std::size_t j = 0; j < ncol; ++j)
    numbers_in_text |= field[j] == Field::u && (s.kinds[j].real || s.kinds[j].integer || s.kinds[j].boolean);
  if (numbers_in_text)
    each_chunk([&](std::size_t n, const Spilled* cells) {
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t j = 0; j < ncol; ++j) {
          const Spilled c = cells[r * ncol + j];
          if (field[j] == Field::u && c.kind != Kind::text && c.kind != Kind::empty)
            s.kinds[j].width = std::max(s.kinds[j].width, number_text(c).size());
        }
    });
  std::string descr = "[";
  std::size_t itemsize = 0;
  for (std::size_t j = 0; j < ncol; ++j) {
    const std::size_t w = s.kinds[j].width;
    const std::string type = field[j] == Field::f8   ? "'<f8'"
                             : field[j] == Field::i8 ? "'<i8'"
                             : field[j] == Field::b1 ? "'|b1'"
                                                     : fmt::format("'|S{}'", w);
    itemsize += field[j] == Field::b1 ? 1 : field[j] == Field::u ? w : 8;
    descr += fmt::format("{}({}, {})", j ? ", " : "", py_literal(s.columns[j]), type);
  }
  descr += "]";
  std::string out = npy_header(fmt::format("{{'descr': {}, 'fortran_order': False, 'shape': ({},), }}", descr, s.rows));
  sink(out);
  out.clear();
  // The texts' records (UTF-8 bytes, NUL-padded to the field's width), once per distinct text.
  std::vector<std::vector<std::string>> text_records(ncol);
  auto padded = [](std::string_view t, std::size_t w) {
    std::string rec(t);
    rec.append(w - rec.size(), '\0');
    return rec;
  };
  for (std::size_t j = 0; j < ncol; ++j)
    if (field[j] == Field::u)
      for (const std::string& t : s.kinds[j].texts) text_records[j].push_back(padded(t, s.kinds[j].width));
  each_chunk([&](std::size_t n, const Spilled* cells) {
    out.clear();
    out.reserve(n * itemsize);
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t j = 0; j < ncol; ++j) {
        const Spilled c = cells[r * ncol + j];
        switch (field[j]) {
          case Field::u:
            if (c.kind == Kind::text) out += text_records[j][c.bits];
            else out += padded(number_text(c), s.kinds[j].width);
            break;
          case Field::b1: out += static_cast<char>(c.bits ? 1 : 0); break;
          case Field::i8: put_le(out, c.bits, 8); break;
          case Field::f8: {
            double v = std::numeric_limits<double>::quiet_NaN();
            if (c.kind == Kind::real) std::memcpy(&v, &c.bits, 8);
            if (c.kind == Kind::integer) v = static_cast<double>(static_cast<std::int64_t>(c.bits));
            if (c.kind == Kind::boolean) v = static_cast<double>(c.bits);
            put_f8(out, v);
            break;
          }
        }
      }
    sink(out);
  });
}

std::string npy_table_bytes(const Table& t) {
  NpyTableWriter w(t.columns);
  w.add(t);
  std::string out;
  w.finish([&](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace ropekit
