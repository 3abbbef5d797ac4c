#pragma once
// The checked accessors of the config.json readers (hf_config.cpp, non_rope.cpp): each reads one key of a JSON
// object, and refuses a value of the wrong type or range in one line naming the key and the value.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encodings/scaling/keys.hpp"

namespace ropekit::hf {

using json = nlohmann::json;

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  [[noreturn]] void bad(std::string_view key, const json& v, std::string_view constraint) const {
    throw_bad_value(source_, key, v.dump(), constraint);  // bounded there
  }
  [[noreturn]] void missing(std::string_view key, std::string_view why) const {
    throw InputError(fmt::format("{}: {} is missing ({})", source_, key, why));
  }

  // A number (JSON integer or real), finite.
  std::optional<double> number(const json& o, const std::string& key, std::string_view what = "a finite number") const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::nullopt;
    if (!it->is_number() || it->is_boolean()) bad(key, *it, what);
    const double v = it->get<double>();
    if (!std::isfinite(v)) bad(key, *it, what);
    return v;
  }
  std::optional<double> positive(const json& o, const std::string& key) const {
    const auto v = number(o, key, "a number > 0");
    if (v && !(*v > 0)) bad(key, o.at(key), "a number > 0");
    return v;
  }
  std::optional<std::int64_t> integer(const json& o, const std::string& key, std::int64_t min, std::int64_t max) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::nullopt;
    const auto constraint = fmt::format("an integer in [{}, {}]", min, max);
    if (!it->is_number_integer() && !(it->is_number_float() && std::floor(it->get<double>()) == it->get<double>()))
      bad(key, *it, constraint);
    const double d = it->get<double>();
    if (!(d >= static_cast<double>(min) && d <= static_cast<double>(max))) bad(key, *it, constraint);
    return static_cast<std::int64_t>(d);
  }
  std::optional<std::string> string(const json& o, const std::string& key) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) bad(key, *it, "a string");
    return it->get<std::string>();
  }
  std::optional<bool> boolean(const json& o, const std::string& key) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) bad(key, *it, "true or false");
    return it->get<bool>();
  }
  std::vector<double> numbers(const json& o, const std::string& key) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) missing("rope_parameters." + key, "LongRoPE needs both factor lists");
    const auto& v = *it;
    if (!v.is_array() || v.empty()) bad(key, v, "a non-empty list of numbers > 0");
    std::vector<double> out;
    for (const auto& x : v) {
      if (!x.is_number() || x.is_boolean() || !(x.get<double>() > 0) || !std::isfinite(x.get<double>()))
        bad(key, v, "a non-empty list of finite numbers > 0");
      out.push_back(x.get<double>());
    }
    return out;
  }

  const std::string& source() const { return source_; }

 private:
  const std::string& source_;
};

/// Scheme S's keys that a rope dict gives: every key whose descriptor names a transformers key (hf_key; the
/// "config.<key>" ones are the caller's) is read with the reader's checks (> 0 for the rules above 0) and stored
/// through the descriptor, as exact shortest texts. A required key, or one of `needed`, that is absent:
/// "rope_parameters.<key> is missing (rope_type <type> needs it)" (a list: numbers()'s message).
template <class S>
S scheme_from_dict(const Reader& r, const json& d, std::string_view type,
                   std::initializer_list<std::string_view> needed = {}) {
  using scaling::Rule;
  S s;
  const Where where(r.source());
  for (const auto& k : scheme_keys(s)) {
    const std::string hf(k.hf_key), qualified = fmt::format("{}.{}", S::name, k.name);
    if (hf.empty() || hf.starts_with("config.")) continue;
    const bool given = d.contains(hf) && !d.at(hf).is_null();
    const bool need = k.required || std::find(needed.begin(), needed.end(), k.hf_key) != needed.end();
    if (k.list) {
      if (given || need) k.read(s, where, qualified, format_numbers(r.numbers(d, hf)));
    } else if (!given) {
      if (need) r.missing("rope_parameters." + hf, fmt::format("rope_type {} needs it", type));
    } else if (!k.number) {  // a boolean
      k.read(s, where, qualified, *r.boolean(d, hf) ? "true" : "false");
    } else {
      const bool above_zero = k.rule == Rule::factor || k.rule == Rule::orig || k.rule == Rule::positive;
      k.read(s, where, qualified, format_number(*(above_zero ? r.positive(d, hf) : r.number(d, hf))));
    }
  }
  return s;
}

}  // namespace ropekit::hf
