#pragma once
// Numbers as people type them in options, spellings and config files: strict whole-string parsing of reals and
// integers (exact, no rounding through double), integers in a range, and number lists with ranges ("0:4,10").

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// `s` without the blanks (spaces and tabs) at both ends.
std::string_view strip_blanks(std::string_view s);

/// A list of numbers: "0.5,1,2,5", or a range "start:stop[:step]" (stop excluded, step default 1),
/// or both: "0:4,10,100". @throws InputError naming `what` for a malformed item or a non-finite value,
/// or more than max_count values.
std::vector<double> parse_number_list(std::string_view text, std::string_view what, std::size_t max_count = 1u << 24);
/// The same with the message naming `where` and the option `name` as typed ("ropekit features: --lags = ...").
std::vector<double> parse_number_list(std::string_view text, const Where& where, std::string_view name,
                                      std::size_t max_count = 1u << 24);

/// Strict number parsing of a whole string (no trailing characters); nullopt if it is not one.
/// A subnormal such as 4.9e-324 is a number; 1e999 parses as inf (callers check finiteness).
std::optional<double> parse_double(std::string_view s);
/// An integer in [-2^63, 2^63 - 1], in decimal or scientific notation (see IntegerText); nullopt otherwise.
std::optional<std::int64_t> parse_int(std::string_view s);

/// An integer as people type it, read exactly (no rounding through double): "100000", "1e5", "2.5e3",
/// "-7", "+3", "1.0". A fraction ("1.5", "1e-3") or a non-number is classified, not rounded.
struct IntegerText {
  enum class Kind { integer, fraction, too_large, not_a_number };
  Kind kind = Kind::not_a_number;
  bool negative = false;
  std::uint64_t magnitude = 0;  ///< |value| when kind == integer (too_large: beyond 2^64 - 1)
};
IntegerText read_integer_text(std::string_view s);

/// The integer `text` typed for option or key `name`. @throws InputError "<where>: <name> = <text>
/// (must be an integer in [min, max])" for a fraction, a non-number or a value outside [min, max].
std::int64_t parse_integer_in(std::string_view text, const Where& where, std::string_view name, std::int64_t min,
                              std::int64_t max);
/// The same for unsigned values in [0, max] (seeds: max = 2^64 - 1).
std::uint64_t parse_unsigned_in(std::string_view text, const Where& where, std::string_view name, std::uint64_t max);

}  // namespace ropekit
