#pragma once
// NumPy .npy files (format version 1.0) of a float64 vector, so that Python reads ropekit's numbers with
// numpy.load and no parsing: magic "\x93NUMPY", version 1 0, a little-endian uint16 header length, the header
// dict "{'descr': '<f8', 'fortran_order': False, 'shape': (n,), }" padded with spaces and ended by '\n' so that
// the data starts at a multiple of 64 bytes, then the n values as little-endian IEEE doubles.

#include <string>

#include <Eigen/Dense>

namespace ropekit {

/// The whole file's bytes (header and data), little-endian whatever the host's byte order.
std::string npy_bytes(const Eigen::VectorXd& v);

/// Writes npy_bytes(v) with write_file_atomic (reports/output.hpp): all or nothing, never over an input.
/// @throws InputError "cannot write '<path>': <reason>".
void write_npy(const std::string& path, const Eigen::VectorXd& v);

}  // namespace ropekit
