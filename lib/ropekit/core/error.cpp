#include "ropekit/core/error.hpp"

#include "ropekit/core/echo.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ropekit {

Where& Where::rename(std::string parameter, std::string spelling) {
  renames.emplace_back(std::move(parameter), std::move(spelling));
  return *this;
}

std::string Where::name(std::string_view parameter) const {
  for (const auto& [p, s] : renames)
    if (p == parameter) return s;
  if (!prefix.empty() && parameter.substr(0, prefix.size()) == prefix) return std::string(parameter);  // spelled already
  std::string out = prefix;
  for (char c : parameter) out += (dashes && c == '_') ? '-' : c;
  return out;
}

std::string bounded(std::string_view value) {
  constexpr std::size_t kMax = 120, kKeep = 60;  // a bounded value is under 120 long: bounding twice changes nothing
  if (value.size() <= kMax) return std::string(value);
  const bool in_quotes = value.front() == '\'' && value.back() == '\'';
  const std::string_view inner = in_quotes ? value.substr(1, value.size() - 2) : value;
  std::size_t keep = kKeep;
  while (keep > 0 && (static_cast<unsigned char>(inner[keep]) & 0xC0) == 0x80) --keep;  // whole UTF-8 characters
  const auto characters = std::count_if(inner.begin(), inner.end(),
                                        [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
  const char* q = in_quotes ? "'" : "";
  return fmt::format("{}{}...{} ({} characters)", q, inner.substr(0, keep), q, characters);
}

std::string quote(std::string_view text) { return bounded(fmt::format("'{}'", text)); }

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

std::string format_significant(double v, int digits) {
  if (!std::isfinite(v)) return format_number(v);
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e-4 && a < 1e7) {
    const int exponent = static_cast<int>(std::floor(std::log10(a)));
    const int decimals = std::max(0, digits - 1 - exponent);
    std::string out = fmt::format("{:.{}f}", v, decimals);
    // Trailing zeros carry no information here: 1.00000 -> 1, 9.510 -> 9.51.
    if (out.find('.') != std::string::npos) {
      out.erase(out.find_last_not_of('0') + 1);
      if (out.back() == '.') out.pop_back();
    }
    return out;
  }
  return fmt::format("{:.{}e}", v, digits - 1);
}

void throw_bad_value(std::string_view where, std::string_view name, std::string_view value,
                     std::string_view constraint) {
  throw InputError(fmt::format("{}: {} = {} (must be {})", where, name, bounded(value), constraint));
}

void throw_bad_value(const Where& where, std::string_view name, std::string_view value, std::string_view constraint) {
  throw_bad_value(where.context, where.name(name), value, constraint);
}

void check_finite(std::string_view where, std::string_view name, double v) {
  if (!std::isfinite(v)) throw_bad_value(where, name, format_number(v), "finite");
}

void check_positive(std::string_view where, std::string_view name, double v) {
  if (!(v > 0) || !std::isfinite(v)) throw_bad_value(where, name, format_number(v), "finite and > 0");
}

void check_nonnegative(std::string_view where, std::string_view name, double v) {
  if (!(v >= 0) || !std::isfinite(v)) throw_bad_value(where, name, format_number(v), "finite and >= 0");
}

void check_at_least(std::string_view where, std::string_view name, std::int64_t v, std::int64_t min) {
  if (v < min) throw_bad_value(where, name, std::to_string(v), fmt::format("an integer >= {}", min));
}

void check_finite(const Where& where, std::string_view name, double v) {
  check_finite(where.context, where.name(name), v);
}
void check_positive(const Where& where, std::string_view name, double v) {
  check_positive(where.context, where.name(name), v);
}
void check_nonnegative(const Where& where, std::string_view name, double v) {
  check_nonnegative(where.context, where.name(name), v);
}
void check_at_least(const Where& where, std::string_view name, std::int64_t v, std::int64_t min) {
  check_at_least(where.context, where.name(name), v, min);
}

void check_in_range(const Where& where, std::string_view name, std::int64_t v, std::int64_t min, std::int64_t max) {
  if (v < min || v > max)
    throw_bad_value(where, name, std::to_string(v), fmt::format("an integer in [{}, {}]", min, max));
}

}  // namespace ropekit
