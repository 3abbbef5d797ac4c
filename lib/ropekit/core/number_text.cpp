#include "ropekit/core/number_text.hpp"

#include <locale.h>
#include <stdlib.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/error.hpp"

namespace ropekit {

std::string_view strip_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_double(std::string_view s) {
  s = strip_blanks(s);
  if (s.empty()) return std::nullopt;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  // In the "C" locale whatever the calling program set: under a German LC_NUMERIC plain strtod stops at the '.'
  // of "1.5e4" (issue 20). strtod_l keeps strtod's grammar and rounding (from_chars would refuse "+1", "1e400").
  static const locale_t c_locale = ::newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  double v = ::strtod_l(buf.c_str(), &end, c_locale);
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  return v;  // ERANGE: +-inf on overflow (refused as not finite), the nearest subnormal or 0 on underflow
}

IntegerText read_integer_text(std::string_view s) {
  using Kind = IntegerText::Kind;
  IntegerText out;
  s = strip_blanks(s);
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) out.negative = s[i++] == '-';
  std::string digits;  // mantissa digits without the point
  long long shift = 0;  // value = digits * 10^shift
  bool any = false, point = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      digits += c, any = true;
      if (point) --shift;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!any) return out;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    long long e = 0;
    bool edigits = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      edigits = true;
      e = std::min(e * 10 + (s[i] - '0'), 1'000'000'000LL);  // saturates: far beyond any integer's exponent
    }
    if (!edigits) return out;
    shift += eneg ? -e : e;
  }
  if (i != s.size()) return out;
  // Drop leading zeros, then move trailing zeros into the exponent.
  const auto first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    out.kind = Kind::integer;  // zero, in any notation
    out.negative = false;
    return out;
  }
  digits.erase(0, first);
  while (digits.back() == '0') digits.pop_back(), ++shift;
  if (shift < 0) {
    out.kind = Kind::fraction;
    return out;
  }
  if (static_cast<long long>(digits.size()) + shift > 20) {
    out.kind = Kind::too_large;
    return out;
  }
  std::uint64_t v = 0;
  auto push = [&](unsigned d) {
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
    return true;
  };
  for (char c : digits)
    if (!push(static_cast<unsigned>(c - '0'))) return out.kind = Kind::too_large, out;
  for (long long k = 0; k < shift; ++k)
    if (!push(0)) return out.kind = Kind::too_large, out;
  out.kind = Kind::integer;
  out.magnitude = v;
  return out;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  const IntegerText t = read_integer_text(s);
  if (t.kind != IntegerText::Kind::integer) return std::nullopt;
  constexpr std::uint64_t kMaxPos = static_cast<std::uint64_t>(INT64_MAX);
  if (!t.negative && t.magnitude > kMaxPos) return std::nullopt;
  if (t.negative && t.magnitude > kMaxPos + 1) return std::nullopt;
  if (t.negative) return t.magnitude == kMaxPos + 1 ? INT64_MIN : -static_cast<std::int64_t>(t.magnitude);
  return static_cast<std::int64_t>(t.magnitude);
}

std::int64_t parse_integer_in(std::string_view text, const Where& where, std::string_view name, std::int64_t min,
                              std::int64_t max) {
  const auto v = parse_int(text);
  if (!v || *v < min || *v > max)
    throw_bad_value(where, name, std::string(strip_blanks(text)), fmt::format("an integer in [{}, {}]", min, max));
  return *v;
}

std::uint64_t parse_unsigned_in(std::string_view text, const Where& where, std::string_view name, std::uint64_t max) {
  const IntegerText t = read_integer_text(text);
  if (t.kind != IntegerText::Kind::integer || (t.negative && t.magnitude != 0) || t.magnitude > max)
    throw_bad_value(where, name, std::string(strip_blanks(text)), fmt::format("an integer in [0, {}]", max));
  return t.magnitude;
}

std::vector<double> parse_number_list(std::string_view text, std::string_view what, std::size_t max_count) {
  return parse_number_list(text, Where("ropekit"), what, max_count);
}

std::vector<double> parse_number_list(std::string_view text, const Where& where, std::string_view what,
                                      std::size_t max_count) {
  std::vector<double> out;
  std::string_view rest = text;
  auto bad = [&](std::string_view item, std::string_view why) {
    throw_bad_value(where, what, fmt::format("'{}'", item), why);
  };
  if (strip_blanks(rest).empty()) bad(text, "a non-empty list such as 0,1,2 or 0:1024");
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = strip_blanks(rest.substr(0, comma));
    if (item.find(':') == std::string_view::npos) {
      auto v = parse_double(item);
      if (!v) bad(item, "a number (list: a,b,c; range: start:stop[:step])");
      if (!std::isfinite(*v)) bad(item, "finite");
      out.push_back(*v);
    } else {
      std::vector<double> parts;
      std::string_view r = item;
      while (true) {
        auto colon = r.find(':');
        auto v = parse_double(r.substr(0, colon));
        if (!v || !std::isfinite(*v)) bad(item, "a range start:stop[:step] of finite numbers");
        parts.push_back(*v);
        if (colon == std::string_view::npos) break;
        r.remove_prefix(colon + 1);
      }
      if (parts.size() < 2 || parts.size() > 3) bad(item, "a range start:stop[:step]");
      const double step = parts.size() == 3 ? parts[2] : 1.0;
      if (!(step > 0)) bad(item, "a range with step > 0");
      // The count ceil((stop - start)/step) only bounds the work: its rounding can be one off either way
      // (0.1:0.4:0.1 gives 3.0000000000000004, so 4 values with 0.4 = stop among them). The values themselves
      // decide: start + i step for every i with start + i step < stop (non-decreasing in i, so a plain scan).
      const double n = std::ceil((parts[1] - parts[0]) / step);
      if (n > static_cast<double>(max_count) + 1) bad(item, fmt::format("at most {} values", max_count));
      for (std::size_t i = 0;; ++i) {
        const double v = parts[0] + static_cast<double>(i) * step;
        if (!(v < parts[1])) break;
        if (out.size() >= max_count) bad(item, fmt::format("at most {} values", max_count));
        out.push_back(v);
      }
    }
    if (out.size() > max_count) bad(text, fmt::format("at most {} values", max_count));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (out.empty()) bad(text, "a non-empty list (the range is empty)");
  return out;
}

}  // namespace ropekit
