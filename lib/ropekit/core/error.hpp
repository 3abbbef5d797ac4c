#pragma once
// Input validation with one message shape everywhere:
//   <where>: <name> = <value> (must be <constraint>)
// e.g. "ropekit features: --head-dim = 63 (must be a positive even integer)".
// <where> names what the user typed (a command, a config file) and <name> the option or key as typed
// there: validators take a Where that spells their parameter names (num_freqs -> --num-freqs).
// The command line prints such errors as "error: ..." and exits with code 2.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ropekit {

/// Bad input from a user (a parameter, a name, a file). Never thrown for internal failures.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Where a value came from and how parameter names are spelled there, for messages.
struct Where {
  std::string context = "ropekit";  ///< the command or file: "ropekit jordan positionwise", "config c.yaml"
  std::string prefix;               ///< before every parameter name: "--" (options), "toy." (config keys)
  bool dashes = false;              ///< '_' -> '-' in parameter names (options: max_exp -> --max-exp)
  std::vector<std::pair<std::string, std::string>> renames;  ///< parameter -> spelling; wins over the rest

  Where() = default;
  explicit Where(std::string ctx, std::string name_prefix = "", bool use_dashes = false)
      : context(std::move(ctx)), prefix(std::move(name_prefix)), dashes(use_dashes) {}
  /// The parameters of command `command` spelled as its options: max_exp -> --max-exp.
  static Where options(std::string command) { return Where(std::move(command), "--", true); }
  /// Spells `parameter` as `spelling` (e.g. gamma -> position.gamma_min).
  Where& rename(std::string parameter, std::string spelling);
  /// The parameter as the user typed it.
  std::string name(std::string_view parameter) const;
};

/// Formats a double the way errors and CSV cells show it: shortest round-trip, "nan", "inf".
std::string format_number(double v);

/// Formats a real with n significant digits (fixed or scientific, whichever is shorter), as reports print them.
std::string format_significant(double v, int digits);

/// @throws InputError "<where>: <name> = <value> (must be <constraint>)".
[[noreturn]] void throw_bad_value(std::string_view where, std::string_view name, std::string_view value,
                                  std::string_view constraint);
/// The same with the parameter spelled by `where` (name is the parameter, e.g. "num_freqs").
[[noreturn]] void throw_bad_value(const Where& where, std::string_view name, std::string_view value,
                                  std::string_view constraint);

// NaN fails every check (they test `!(x > 0)`, never `x <= 0`).
void check_finite(std::string_view where, std::string_view name, double v);
void check_positive(std::string_view where, std::string_view name, double v);     ///< finite, > 0
void check_nonnegative(std::string_view where, std::string_view name, double v);  ///< finite, >= 0
void check_at_least(std::string_view where, std::string_view name, std::int64_t v, std::int64_t min);
void check_finite(const Where& where, std::string_view name, double v);
void check_positive(const Where& where, std::string_view name, double v);
void check_nonnegative(const Where& where, std::string_view name, double v);
void check_at_least(const Where& where, std::string_view name, std::int64_t v, std::int64_t min);
/// min <= v <= max: "(must be an integer in [min, max])".
void check_in_range(const Where& where, std::string_view name, std::int64_t v, std::int64_t min, std::int64_t max);

}  // namespace ropekit
