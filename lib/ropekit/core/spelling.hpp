#pragma once
// Readable spellings of parameterised families, shared by methods, targets and encodings:
//   family[:key=value[,key=value...]]      e.g. "jordan-scaled:m=4,c=0.1"
// A bare value after a key=value continues that key's list: "sinc:W=1,2,dims=2" gives W = [1, 2].

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// One parsed spelling. Accessors consume keys; finish() rejects any key nobody asked for.
class Spelling {
 public:
  /// @throws InputError on an empty family, an empty key, a repeated key or a missing '='.
  static Spelling parse(std::string_view text, std::string_view what);

  const std::string& family() const { return family_; }
  const std::string& text() const { return text_; }
  const std::string& what() const { return what_; }
  bool has_params() const { return !params_.empty(); }

  /// Each @throws InputError naming the spelling, the key, the value and the constraint.
  std::optional<double> take_double(std::string_view key);
  std::optional<std::int64_t> take_int(std::string_view key);
  std::optional<bool> take_bool(std::string_view key);
  std::optional<std::string> take_word(std::string_view key);
  std::optional<std::vector<double>> take_doubles(std::string_view key);

  /// @throws InputError if keys remain that the family does not know; lists the known keys.
  void finish(std::string_view known_keys) const;

 private:
  std::optional<std::vector<std::string>> take(std::string_view key);
  std::string where() const;
  std::string what_;
  std::string text_;
  std::string family_;
  std::map<std::string, std::vector<std::string>, std::less<>> params_;
};

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
