#pragma once
// Input validation with one message shape everywhere:
//   <where>: <name> = <value> (must be <constraint>)
// e.g. "ropekit::BasisParams: head_dim = 63 (must be a positive even integer)".
// The command line prints such errors as "error: ..." and exits with code 2.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ropekit {

/// Bad input from a user (a parameter, a name, a file). Never thrown for internal failures.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Formats a double the way errors and CSV cells show it: shortest round-trip, "nan", "inf".
std::string format_number(double v);

/// @throws InputError "<where>: <name> = <value> (must be <constraint>)".
[[noreturn]] void throw_bad_value(std::string_view where, std::string_view name, std::string_view value,
                                  std::string_view constraint);

// NaN fails every check (they test `!(x > 0)`, never `x <= 0`).
void check_finite(std::string_view where, std::string_view name, double v);
void check_positive(std::string_view where, std::string_view name, double v);     ///< finite, > 0
void check_nonnegative(std::string_view where, std::string_view name, double v);  ///< finite, >= 0
void check_at_least(std::string_view where, std::string_view name, std::int64_t v, std::int64_t min);

}  // namespace ropekit
