#include "reports/frequency_export.hpp"

#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "reports/output.hpp"
#include "ropekit/core/error.hpp"

namespace ropekit {

namespace {

std::string extension(const std::string& path) {
  const auto dot = path.rfind('.');
  const auto slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  return path.substr(dot);
}

}  // namespace

std::string npy_bytes(const Eigen::VectorXd& v) {
  static_assert(std::endian::native == std::endian::little, "the .npy writer assumes a little-endian host");
  std::string header = fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({},), }}", v.size());
  // magic (6) + version (2) + header length (2) + header + '\n' is a multiple of 64 (NumPy's alignment).
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  const std::size_t at = out.size();
  out.resize(at + sizeof(double) * static_cast<std::size_t>(v.size()));
  if (v.size() > 0) std::memcpy(out.data() + at, v.data(), sizeof(double) * static_cast<std::size_t>(v.size()));
  return out;
}

void check_frequency_export_path(const std::string& path, std::string_view where) {
  const auto ext = extension(path);
  if (ext != ".npy" && ext != ".txt" && ext != ".json")
    throw InputError(fmt::format("{} = '{}' (must end in .npy, .txt or .json)", where, path));
  check_output_path(path);
}

void write_frequency_export(const std::string& path, const Eigen::VectorXd& v) {
  const auto ext = extension(path);
  std::string text;
  if (ext == ".npy") {
    text = npy_bytes(v);
  } else if (ext == ".json") {
    text = "[";
    for (Eigen::Index i = 0; i < v.size(); ++i) text += (i ? ", " : "") + format_number(v[i]);
    text += "]\n";
  } else {
    for (Eigen::Index i = 0; i < v.size(); ++i) text += format_number(v[i]) + "\n";
  }
  write_file_atomic(path, text);
}

}  // namespace ropekit
