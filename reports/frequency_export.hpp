#pragma once
// Frequencies exported for a model (`fit-params --export`, `design --export`): FILE.txt (one per line, %.17g),
// FILE.json (an array) or FILE.npy (reports/npy.hpp: NumPy format 1.0, little-endian float64, 1-D), which
// `torch.from_numpy(numpy.load(FILE))` reads directly. The extension chooses.

#include <string>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// @throws InputError "<where>: --export = '<path>' (must be a file name ending in .txt, .json or .npy)", or
/// "(must be a file other than --out)" when it is the report's file, or an unwritable output path.
void check_frequency_export_path(const std::string& path, const std::string& out, const Where& where);

/// The file's bytes in the format the extension names (call check_frequency_export_path first).
std::string frequency_export_bytes(const std::string& path, const Eigen::VectorXd& v);

}  // namespace ropekit
