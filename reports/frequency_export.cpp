#include "reports/frequency_export.hpp"

#include <fmt/format.h>

#include "reports/npy.hpp"
#include "reports/output.hpp"

namespace ropekit {

namespace {

// A name with something before the extension (".npy" alone is not a file name ending in .npy).
bool ends_with(const std::string& path, std::string_view ext) { return path.size() > ext.size() && path.ends_with(ext); }

}  // namespace

void check_frequency_export_path(const std::string& path, const std::string& out, const Where& where) {
  if (!ends_with(path, ".txt") && !ends_with(path, ".json") && !ends_with(path, ".npy"))
    throw_bad_value(where, "export", "'" + path + "'", "a file name ending in .txt, .json or .npy");
  if (path == out) throw_bad_value(where, "export", "'" + path + "'", "a file other than --out");
  check_output_path(path);
}

std::string frequency_export_bytes(const std::string& path, const Eigen::VectorXd& v) {
  if (ends_with(path, ".npy")) return npy_bytes(v);
  const bool json = ends_with(path, ".json");
  std::string out = json ? "[" : "";
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (json) out += (i ? ",\n " : "\n ") + format_number(v[i]);
    else out += fmt::format("{:.17g}\n", v[i]);
  }
  return out + (json ? "\n]\n" : "");
}

}  // namespace ropekit
