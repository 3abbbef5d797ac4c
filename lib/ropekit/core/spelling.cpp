#include "ropekit/core/spelling.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <algorithm>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"

namespace ropekit {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  return v;  // ERANGE: +-inf on overflow (refused as not finite), the nearest subnormal or 0 on underflow
}

IntegerText read_integer_text(std::string_view s) {
  using Kind = IntegerText::Kind;
  IntegerText out;
  s = trim(s);
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
    throw_bad_value(where, name, std::string(trim(text)), fmt::format("an integer in [{}, {}]", min, max));
  return *v;
}

std::uint64_t parse_unsigned_in(std::string_view text, const Where& where, std::string_view name, std::uint64_t max) {
  const IntegerText t = read_integer_text(text);
  if (t.kind != IntegerText::Kind::integer || (t.negative && t.magnitude != 0) || t.magnitude > max)
    throw_bad_value(where, name, std::string(trim(text)), fmt::format("an integer in [0, {}]", max));
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
  if (trim(rest).empty()) bad(text, "a non-empty list such as 0,1,2 or 0:1024");
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
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

Spelling Spelling::parse(std::string_view text, std::string_view what) {
  Spelling s;
  s.what_ = std::string(what);
  s.text_ = std::string(trim(text));
  std::string_view rest = s.text_;
  auto colon = rest.find(':');
  s.family_ = std::string(trim(rest.substr(0, colon)));
  if (s.family_.empty()) throw_bad_value(s.what_, "name", fmt::format("'{}'", s.text_), "a non-empty name");
  if (colon == std::string_view::npos) return s;
  rest.remove_prefix(colon + 1);
  std::string last_key;
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (last_key.empty() || item.empty())
        throw InputError(fmt::format("{} '{}': '{}' is not key=value (spelling: family:key=value,key=value)",
                                     s.what_, s.text_, item));
      s.params_[last_key].emplace_back(item);
    } else {
      std::string key(trim(item.substr(0, eq)));
      std::string value(trim(item.substr(eq + 1)));
      if (key.empty() || value.empty())
        throw InputError(fmt::format("{} '{}': '{}' needs a key and a value", s.what_, s.text_, item));
      if (s.params_.count(key))
        throw InputError(fmt::format("{} '{}': parameter '{}' given twice", s.what_, s.text_, key));
      s.params_[key].push_back(value);
      last_key = key;
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return s;
}

std::string Spelling::where() const { return fmt::format("{} '{}'", what_, text_); }

std::optional<std::vector<std::string>> Spelling::take(std::string_view key) {
  auto it = params_.find(key);
  if (it == params_.end()) return std::nullopt;
  auto values = std::move(it->second);
  params_.erase(it);
  return values;
}

std::optional<double> Spelling::take_double(std::string_view key) {
  auto v = take_doubles(key);
  if (!v) return std::nullopt;
  if (v->size() != 1) throw_bad_value(where(), key, fmt::format("{} values", v->size()), "a single number");
  return v->front();
}

std::optional<std::vector<double>> Spelling::take_doubles(std::string_view key) {
  auto raw = take(key);
  if (!raw) return std::nullopt;
  std::vector<double> out;
  for (const auto& r : *raw) {
    auto d = parse_double(r);
    if (!d) throw_bad_value(where(), key, fmt::format("'{}'", r), "a number");
    check_finite(where(), key, *d);
    out.push_back(*d);
  }
  return out;
}

std::optional<std::int64_t> Spelling::take_int(std::string_view key) {
  auto raw = take(key);
  if (!raw) return std::nullopt;
  if (raw->size() != 1) throw_bad_value(where(), key, fmt::format("{} values", raw->size()), "a single integer");
  auto i = parse_int(raw->front());
  if (!i) throw_bad_value(where(), key, fmt::format("'{}'", raw->front()), "an integer");
  return i;
}

std::optional<bool> Spelling::take_bool(std::string_view key) {
  auto w = take_word(key);
  if (!w) return std::nullopt;
  if (*w == "true" || *w == "1" || *w == "yes") return true;
  if (*w == "false" || *w == "0" || *w == "no") return false;
  throw_bad_value(where(), key, fmt::format("'{}'", *w), "true or false");
}

std::optional<std::string> Spelling::take_word(std::string_view key) {
  auto raw = take(key);
  if (!raw) return std::nullopt;
  if (raw->size() != 1) throw_bad_value(where(), key, fmt::format("{} values", raw->size()), "a single word");
  return raw->front();
}

void Spelling::finish(std::string_view known_keys) const {
  if (params_.empty()) return;
  throw InputError(fmt::format("{}: unknown parameter '{}' (known for '{}': {})", where(), params_.begin()->first,
                               family_, known_keys.empty() ? "none" : known_keys));
}

}  // namespace ropekit
