#pragma once
// Files compiled into the binary (the paper's configs and expected numbers), see cmake/embed.cmake.

#include <string_view>

namespace ropekit {
/// The text of an embedded file by its repository path, e.g. "configs/paper-table3-toy.yaml".
/// @throws std::out_of_range for a name that was not embedded.
std::string_view embedded_file(std::string_view name);
}  // namespace ropekit
