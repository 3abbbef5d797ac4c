// NumPy .npy v1.0 writer (npy.hpp).
#include "reports/npy.hpp"

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "reports/output.hpp"

namespace ropekit {

std::string npy_bytes(const Eigen::VectorXd& v) {
  std::string header = fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({},), }}", v.size());
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64 (numpy's alignment).
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.reserve(out.size() + 8 * static_cast<std::size_t>(v.size()));
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    std::uint64_t bits;
    const double x = v[i];
    std::memcpy(&bits, &x, 8);
    for (int b = 0; b < 8; ++b) out += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

void write_npy(const std::string& path, const Eigen::VectorXd& v) { write_file_atomic(path, npy_bytes(v)); }

}  // namespace ropekit
