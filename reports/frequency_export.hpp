#pragma once
// Frequencies exported for a model (`fit-params --export`, `design --export`): FILE.txt (one per line, shortest
// round-trip decimal), FILE.json (an array) or FILE.npy (NumPy format 1.0, little-endian float64, 1-D), which
// `torch.from_numpy(numpy.load(FILE))` reads directly.

#include <string>
#include <string_view>

#include <Eigen/Dense>

namespace ropekit {

/// The bytes of a 1-D float64 .npy file (magic, version 1.0, header dict padded to a multiple of 64, data).
std::string npy_bytes(const Eigen::VectorXd& v);

/// @throws InputError "<where> = '<path>' (must end in .npy, .txt or .json)" or an unwritable output path.
void check_frequency_export_path(const std::string& path, std::string_view where);

/// Writes v atomically in the format the extension names (check_frequency_export_path first).
void write_frequency_export(const std::string& path, const Eigen::VectorXd& v);

}  // namespace ropekit
