#include "ropekit/encodings/scaling/keys.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace ropekit {

namespace scaling::detail {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> to_number(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string list_spelling(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + format_number(v[i]);
  return out + "]";
}

void check_rule(const Where& w, const std::string& name, double v, Rule rule) {
  switch (rule) {
    case Rule::any: return;
    case Rule::factor: check_positive(w, name, v); return;
    case Rule::orig:
      if (!(v > 1) || !std::isfinite(v)) throw_bad_value(w, name, format_number(v), "finite and > 1");
      return;
    case Rule::positive: check_positive(w, name, v); return;
    case Rule::nonnegative:
      if (!(v >= 0) || !std::isfinite(v)) throw_bad_value(w, name, format_number(v), "finite and >= 0");
      return;
    case Rule::finite: check_finite(w, name, v); return;
  }
}

void check_list(const Where& w, const std::string& name, const std::vector<double>& v) {
  if (v.empty()) throw_bad_value(w, name, "[]", "a non-empty list");
  for (std::size_t i = 0; i < v.size(); ++i) check_positive(w, fmt::format("{}[{}]", name, i), v[i]);
}

std::optional<std::string> rule_note(const std::string& name, double v, Rule rule) {
  if (rule != Rule::factor || !(v < 1)) return std::nullopt;
  return fmt::format("{} = {} is below 1: accepted as transformers does (it only warns that a factor should be >= 1); "
                     "it compresses the context instead of extending it",
                     name, format_number(v));
}

void check_key_names(const Where& w, std::string_view scheme, const std::map<std::string, std::string>& keys,
                     const std::vector<std::string_view>& known, const std::vector<RequiredKey>& required) {
  const auto qualified = [&](std::string_view key) { return fmt::format("{}.{}", scheme, key); };
  for (const auto& [key, value] : keys)
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw_bad_value(w, qualified(key), value,
                      known.empty() ? fmt::format("absent: {} takes no keys", scheme)
                                    : fmt::format("a key of {}: {}", scheme, fmt::join(known, ", ")));
  for (const auto& k : required)
    if (!keys.count(std::string(k.name)))
      throw_bad_value(w, qualified(k.name), "(missing)",
                      fmt::format("given: {} needs {}{}{}", scheme, k.name, k.meaning.empty() ? "" : ", ",
                                  k.meaning) + (k.hf_key.empty() ? "" : fmt::format(" (transformers' {})", k.hf_key)));
}

double read_number(const Where& w, const std::string& name, const std::string& text) {
  const auto v = to_number(text);
  if (!v) throw_bad_value(w, name, text, "a number");
  return *v;
}

bool read_bool(const Where& w, const std::string& name, const std::string& text) {
  const std::string_view v = trim(text);
  if (v != "true" && v != "false") throw_bad_value(w, name, text, "true or false");
  return v == "true";
}

}  // namespace scaling::detail

std::vector<double> parse_bracketed_numbers(std::string_view text, const Where& where, std::string_view name) {
  using scaling::detail::trim;
  const std::string_view t = trim(text);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']')
    throw_bad_value(where, name, std::string(text), "a list of numbers in square brackets, e.g. [1,1.05,1.1]");
  std::string_view inner = trim(t.substr(1, t.size() - 2));
  if (inner.empty()) throw_bad_value(where, name, std::string(text), "a non-empty list of numbers");
  std::vector<double> out;
  while (true) {
    const std::size_t comma = inner.find(',');
    const std::string_view item = inner.substr(0, comma);
    const auto v = scaling::detail::to_number(item);
    if (!v) throw_bad_value(where, fmt::format("{}[{}]", name, out.size()), std::string(trim(item)), "a number");
    out.push_back(*v);
    if (comma == std::string_view::npos) break;
    inner.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace ropekit
