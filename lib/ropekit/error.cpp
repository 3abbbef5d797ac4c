#include "ropekit/error.hpp"

#include <cmath>

#include <fmt/format.h>

namespace ropekit {

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

void throw_bad_value(std::string_view where, std::string_view name, std::string_view value,
                     std::string_view constraint) {
  throw InputError(fmt::format("{}: {} = {} (must be {})", where, name, value, constraint));
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

}  // namespace ropekit
