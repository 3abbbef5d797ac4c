#pragma once
// How errors echo what the user gave: bounded, so that a 10 MB number gives a short line.

#include <string>
#include <string_view>

namespace ropekit {

/// `value` unchanged up to 120 characters, else its first 60 and its length: "'1111...' (10485760 characters)".
/// A value in single quotes keeps them. throw_bad_value (error.hpp) bounds every value it is given with it.
std::string bounded(std::string_view value);

/// `text` in single quotes, bounded: "'abc'".
std::string quote(std::string_view text);

}  // namespace ropekit
