#pragma once
// The generator file: one JSON object holding a GeneratorSet (lie.hpp), written by `ropekit lie build`
// and read by `ropekit lie check`; users may write their own.
//
//   {
//     "format": "ropekit-generators/1",   optional; if present, exactly this
//     "dimension": n,                     required integer, 1 <= n <= 1024
//     "generators": [T_1, ..., T_N],      required, N >= 1 matrices, each n x n
//     "Q": Q,                             optional n x n mixing; the acting generators are Q T_i Q^T
//     "description": "...",               optional string
//     "provenance": { ... }               optional object (how the file was made); not interpreted
//   }
//
// A matrix is an array of n rows, each an array of n finite numbers (row-major, as printed).
// Any other key is refused (a misspelt "Q" must not silently drop the mixing).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ropekit/lie/lie.hpp"

namespace ropekit {

inline constexpr const char* kGeneratorFormat = "ropekit-generators/1";

/// Key/value strings recorded under "provenance", in order.
using Provenance = std::vector<std::pair<std::string, std::string>>;

/// The file's text: rows of a matrix on one line each, numbers in shortest round-trip form (exact).
/// @throws InputError if the set is invalid.
std::string to_generator_json(const GeneratorSet& set, const Provenance& provenance = {});

/// @throws InputError "<source>: ..." for malformed JSON (with line and column), NaN/Infinity tokens, an
///         unknown or missing key, a wrong type, a non-square or ragged matrix, a matrix whose size differs
///         from "dimension", or a non-finite number.
GeneratorSet parse_generator_json(std::string_view text, std::string_view source);

/// read_file + parse_generator_json. @throws InputError naming the path.
GeneratorSet load_generator_file(const std::string& path);

}  // namespace ropekit
