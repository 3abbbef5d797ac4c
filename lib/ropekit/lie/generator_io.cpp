#include "ropekit/lie/generator_io.hpp"

#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"

namespace ropekit {

namespace {

using nlohmann::json;

void append_matrix(std::string& out, const Eigen::MatrixXd& M, const std::string& indent) {
  out += "[\n";
  for (Eigen::Index i = 0; i < M.rows(); ++i) {
    out += indent + "  [";
    for (Eigen::Index j = 0; j < M.cols(); ++j) out += (j ? ", " : "") + format_number(M(i, j));
    out += i + 1 < M.rows() ? "],\n" : "]\n";
  }
  out += indent + "]";
}

// "line L, column C" of a byte offset.
std::string where_in(std::string_view text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return fmt::format("line {}, column {}", line, col);
}

// Python's json module writes NaN / Infinity, which JSON does not have: name them instead of a syntax error.
void throw_if_nonfinite_token(std::string_view text, std::string_view source) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') ++i;
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') {
      in_string = true;
      continue;
    }
    for (std::string_view token : {"NaN", "-Infinity", "Infinity", "nan", "-inf", "inf"}) {
      if (text.substr(i, token.size()) != token) continue;
      const std::size_t end = i + token.size();
      if (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) continue;
      if (i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1]))) continue;
      throw_bad_value(source, fmt::format("value at {}", where_in(text, i)), std::string(token),
                      "a finite number; JSON has no NaN or Infinity");
    }
  }
}

Eigen::MatrixXd read_matrix(const json& j, const std::string& name, int n, std::string_view source) {
  if (!j.is_array())
    throw_bad_value(source, name, fmt::format("a JSON {}", j.type_name()), fmt::format("an array of {} rows", n));
  if (static_cast<int>(j.size()) != n)
    throw_bad_value(source, name + " rows", std::to_string(j.size()), fmt::format("{}, the dimension", n));
  Eigen::MatrixXd M(n, n);
  for (int r = 0; r < n; ++r) {
    const json& row = j[static_cast<std::size_t>(r)];
    const std::string rname = fmt::format("{}[{}]", name, r);
    if (!row.is_array())
      throw_bad_value(source, rname, fmt::format("a JSON {}", row.type_name()), fmt::format("an array of {} numbers", n));
    if (static_cast<int>(row.size()) != n)
      throw_bad_value(source, rname + " length", std::to_string(row.size()),
                      fmt::format("{}, the dimension; a matrix is square, not ragged", n));
    for (int c = 0; c < n; ++c) {
      const json& v = row[static_cast<std::size_t>(c)];
      const std::string vname = fmt::format("{}[{}]", rname, c);
      if (!v.is_number()) throw_bad_value(source, vname, v.dump(), "a finite number");
      const double x = v.get<double>();
      if (!std::isfinite(x)) throw_bad_value(source, vname, format_number(x), "a finite number");
      M(r, c) = x;
    }
  }
  return M;
}

}  // namespace

std::string to_generator_json(const GeneratorSet& set, const Provenance& provenance) {
  set.validate("generator JSON");
  std::string out = "{\n";
  out += fmt::format("  \"format\": {},\n", json(kGeneratorFormat).dump());
  if (!set.description.empty()) out += fmt::format("  \"description\": {},\n", json(set.description).dump());
  if (!provenance.empty()) {
    out += "  \"provenance\": {";
    for (std::size_t i = 0; i < provenance.size(); ++i)
      out += fmt::format("{}\n    {}: {}", i ? "," : "", json(provenance[i].first).dump(), json(provenance[i].second).dump());
    out += "\n  },\n";
  }
  out += fmt::format("  \"dimension\": {},\n", set.dim);
  out += "  \"generators\": [\n";
  for (std::size_t i = 0; i < set.base.size(); ++i) {
    out += "    ";
    append_matrix(out, set.base[i], "    ");
    out += i + 1 < set.base.size() ? ",\n" : "\n";
  }
  out += "  ]";
  if (set.mixing) {
    out += ",\n  \"Q\": ";
    append_matrix(out, *set.mixing, "  ");
  }
  out += "\n}\n";
  return out;
}

GeneratorSet parse_generator_json(std::string_view text, std::string_view source) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw_if_nonfinite_token(text, source);
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    throw InputError(fmt::format("{}: malformed JSON ({})", source, bounded(what)));  // what quotes the bad token
  } catch (const json::out_of_range& e) {  // a number beyond double range, e.g. 1e999
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    throw InputError(fmt::format("{}: {} (must be a finite number)", source, bounded(what)));
  }
  if (!doc.is_object())
    throw_bad_value(source, "the top level", fmt::format("a JSON {}", doc.type_name()), "an object");
  static const char* known = "format, description, provenance, dimension, generators, Q";
  for (const auto& [key, value] : doc.items())
    if (key != "format" && key != "description" && key != "provenance" && key != "dimension" && key != "generators" &&
        key != "Q")
      throw_bad_value(source, "key", json(key).dump(), fmt::format("one of {}", known));

  if (doc.contains("format") && doc["format"] != kGeneratorFormat)
    throw_bad_value(source, "format", doc["format"].dump(), fmt::format("\"{}\"", kGeneratorFormat));
  GeneratorSet set;
  if (doc.contains("description")) {
    if (!doc["description"].is_string()) throw_bad_value(source, "description", doc["description"].dump(), "a string");
    set.description = doc["description"].get<std::string>();
  }
  if (doc.contains("provenance") && !doc["provenance"].is_object())
    throw_bad_value(source, "provenance", doc["provenance"].dump(), "an object");

  if (!doc.contains("dimension")) throw_bad_value(source, "dimension", "(missing)", "an integer in [1, 1024]");
  const json& dim = doc["dimension"];
  if (!dim.is_number_integer() || dim.get<std::int64_t>() < 1 || dim.get<std::int64_t>() > kMaxLieDim)
    throw_bad_value(source, "dimension", dim.dump(), fmt::format("an integer in [1, {}]", kMaxLieDim));
  set.dim = static_cast<int>(dim.get<std::int64_t>());

  if (!doc.contains("generators"))
    throw_bad_value(source, "generators", "(missing)", "an array of n x n matrices");
  const json& gens = doc["generators"];
  if (!gens.is_array() || gens.empty())
    throw_bad_value(source, "generators", gens.is_array() ? "[]" : fmt::format("a JSON {}", gens.type_name()),
                    "a non-empty array of n x n matrices");
  if (static_cast<double>(gens.size()) * set.dim * set.dim > kMaxGeneratorEntries)
    throw_bad_value(source, "generators", fmt::format("{} matrices of {}x{}", gens.size(), set.dim, set.dim),
                    fmt::format("at most {} numbers in all", static_cast<long long>(kMaxGeneratorEntries)));
  for (std::size_t i = 0; i < gens.size(); ++i)
    set.base.push_back(read_matrix(gens[i], fmt::format("generators[{}]", i), set.dim, source));
  if (doc.contains("Q")) set.mixing = read_matrix(doc["Q"], "Q", set.dim, source);
  set.validate(std::string(source));
  return set;
}

GeneratorSet load_generator_file(const std::string& path) {
  // 128 MiB: four dense 1024 x 1024 generators at full precision (about 100 MB). The JSON tree takes up to
  // about 30 bytes of memory per byte of file (a file of bare zeros), so the cap also bounds memory (~4 GB).
  return parse_generator_json(read_file(path, "generator file", std::uint64_t{128} << 20), path);
}

}  // namespace ropekit
