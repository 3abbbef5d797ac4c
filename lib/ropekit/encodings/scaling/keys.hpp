#pragma once
// Key descriptors of the context-scaling schemes: each scheme lists its keys once (name, member, constraint,
// required, meaning, transformers' key), and that table drives parse_scaling, spelling, validate, the "a key of ..."
// and "must be given" messages, `ropekit list schemes` and the notes on values transformers accepts with a warning.
// Spelling: every key in table order, defaults included (llama3 writes low=1,high=4), so a spelling says everything
// the frequencies depend on. A key held in std::optional is written only where set: unset is not a value but
// transformers' fallback (yarn's factor: max / orig; attention_factor: from the mscale rule; max: not used), and
// writing a value for it would change what the encoding means where the fallback depends on other keys.
// orig is required wherever a scheme has it: it is the model's own original context length, never assumed.

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// "[1,1.05,1.1]" -> {1, 1.05, 1.1}: square brackets, comma-separated numbers, spaces allowed around them.
/// @throws InputError naming `name` for missing brackets, an empty list or an entry that is not a number.
std::vector<double> parse_bracketed_numbers(std::string_view text, const Where& where, std::string_view name);

namespace scaling {

/// A key's constraint. Lists: a non-empty list whose values are each finite and > 0 (Rule::positive).
enum class Rule {
  any,          ///< no constraint (booleans)
  factor,       ///< finite, > 0; below 1 accepted with a note (transformers only warns: "must be >= 1")
  orig,         ///< finite, > 1
  positive,     ///< finite, > 0
  nonnegative,  ///< finite, >= 0 (0 selects transformers' fallback: beta_fast, beta_slow, mscale, mscale_all_dim)
  finite,       ///< finite
};

/// Meanings shared by several schemes' keys (`ropekit list schemes`, the "must be given" message).
inline constexpr std::string_view kOrigMeaning = "the model's original context length L0";
inline constexpr std::string_view kMaxMeaning = "the extended context length (s = max / orig where factor is unset)";

/// One key of scheme S: its name, rule and whether it is required, what it means and the transformers key it reads,
/// with the reader, printer and checker of its member (made by key<&S::member>(...).about(...), so each exists only
/// for the member's own type).
template <class S>
struct Key {
  std::string_view name;
  Rule rule = Rule::any;
  bool required = false;
  std::string_view unless{};  ///< required unless this other key is given (yarn: factor unless max)
  bool list = false;          ///< a bracketed list of numbers
  std::string_view meaning{};  ///< one line for `ropekit list schemes` and the "must be given" message
  std::string_view hf_key{};   ///< transformers' rope_parameters / rope_scaling key (or config key) it maps to
  void (*read)(S& s, const Where& where, const std::string& qualified, const std::string& text) = nullptr;
  /// The value's text, or none where an optional key is unset.
  std::optional<std::string> (*print)(const S& s) = nullptr;
  void (*check)(const S& s, const Where& where, const std::string& qualified, Rule rule) = nullptr;
  /// The value of a number key (double or optional<double>; none where unset), nullptr for lists and booleans.
  std::optional<double> (*number)(const S& s) = nullptr;

  /// This key with its meaning and transformers' key.
  Key about(std::string_view what, std::string_view hf) const {
    Key k = *this;
    k.meaning = what;
    k.hf_key = hf;
    return k;
  }
};

namespace detail {
std::optional<double> to_number(std::string_view text);
std::string_view trim(std::string_view s);
std::string list_spelling(const std::vector<double>& v);
void check_rule(const Where& w, const std::string& name, double v, Rule rule);
void check_list(const Where& w, const std::string& name, const std::vector<double>& v);
std::optional<std::string> rule_note(const std::string& name, double v, Rule rule);
/// A required key as its "must be given" message names it.
struct RequiredKey {
  std::string_view name, meaning, hf_key;
};
/// @throws InputError for a key not in `known`, or for the first of `required` that is missing:
///         "<scheme>.<key> = (missing) (must be given: <scheme> needs <key>, <meaning> (transformers' <hf_key>))".
void check_key_names(const Where& w, std::string_view scheme, const std::map<std::string, std::string>& keys,
                     const std::vector<std::string_view>& known, const std::vector<RequiredKey>& required);
double read_number(const Where& w, const std::string& name, const std::string& text);
bool read_bool(const Where& w, const std::string& name, const std::string& text);
}  // namespace detail

namespace detail {
template <class T>
struct MemberOf;
template <class S, class F>
struct MemberOf<F S::*> {
  using Struct = S;
  using Field = F;
};
}  // namespace detail

/// The descriptor of key `name`, stored in member M of its scheme (double, std::optional<double>, bool or
/// std::vector<double>).
template <auto M>
Key<typename detail::MemberOf<decltype(M)>::Struct> key(std::string_view name, Rule rule = Rule::any,
                                                         bool required = false, std::string_view unless = {}) {
  using S = typename detail::MemberOf<decltype(M)>::Struct;
  using F = typename detail::MemberOf<decltype(M)>::Field;
  Key<S> k{name, rule, required, unless, std::is_same_v<F, std::vector<double>>};
  k.read = [](S& s, const Where& where, const std::string& qualified, const std::string& text) {
    if constexpr (std::is_same_v<F, bool>)
      s.*M = detail::read_bool(where, qualified, text);
    else if constexpr (std::is_same_v<F, std::vector<double>>)
      s.*M = parse_bracketed_numbers(text, where, qualified);
    else
      s.*M = detail::read_number(where, qualified, text);
  };
  k.print = [](const S& s) -> std::optional<std::string> {
    const F& field = s.*M;
    if constexpr (std::is_same_v<F, std::optional<double>>) {
      if (!field) return std::nullopt;
      return format_number(*field);
    } else {
      if constexpr (std::is_same_v<F, bool>) return std::string(field ? "true" : "false");
      else if constexpr (std::is_same_v<F, std::vector<double>>) return detail::list_spelling(field);
      else return format_number(field);
    }
  };
  k.check = [](const S& s, const Where& where, const std::string& qualified, Rule r) {
    const F& field = s.*M;
    if constexpr (std::is_same_v<F, std::vector<double>>)
      detail::check_list(where, qualified, field);
    else if constexpr (std::is_same_v<F, std::optional<double>>) {
      if (field) detail::check_rule(where, qualified, *field, r);
    } else if constexpr (std::is_same_v<F, double>)
      detail::check_rule(where, qualified, field, r);
  };
  if constexpr (std::is_same_v<F, double> || std::is_same_v<F, std::optional<double>>)
    k.number = [](const S& s) { return std::optional<double>(s.*M); };
  return k;
}

/// The keys of S, read from a scheme's key texts (unknown and missing keys refused, as parse_scaling documents).
template <class S>
S parse_keys(const std::map<std::string, std::string>& keys, const Where& where) {
  std::vector<std::string_view> known;
  std::vector<detail::RequiredKey> required;
  for (const auto& k : scheme_keys(S{})) {
    known.push_back(k.name);
    if (k.required) required.push_back({k.name, k.meaning, k.hf_key});
  }
  detail::check_key_names(where, S::name, keys, known, required);
  S s;
  for (const auto& k : scheme_keys(S{}))
    if (const auto it = keys.find(std::string(k.name)); it != keys.end())
      k.read(s, where, fmt::format("{}.{}", S::name, k.name), it->second);
  return s;
}

/// The key=value texts of a spelling of s: every key in table order, optionals where set.
template <class S>
std::vector<std::string> spelling_keys(const S& s) {
  std::vector<std::string> texts;
  for (const auto& k : scheme_keys(s))
    if (const auto value = k.print(s)) texts.push_back(fmt::format("{}={}", k.name, *value));
  return texts;
}

/// Checks every key of s against its rule, in table order, and that a key required unless another is given has
/// one of the two.
/// @throws InputError "<where>: <scheme>.<key> = <value> (must be <constraint>)".
template <class S>
void check_keys(const S& s, const Where& where) {
  const auto table = scheme_keys(s);
  for (const Key<S>& k : table) {
    const std::string name = fmt::format("{}.{}", S::name, k.name);
    k.check(s, where, name, k.rule);
    if (k.unless.empty() || k.number(s)) continue;
    for (const Key<S>& other : table)
      if (other.name == k.unless && !other.number(s))
        throw_bad_value(where, name, "(missing)", fmt::format("given: {} needs {} or {}", S::name, k.name, k.unless));
  }
}

/// One line per value that transformers accepts with a warning under its key's rule (a factor below 1).
template <class S>
std::vector<std::string> rule_notes(const S& s) {
  std::vector<std::string> out;
  for (const Key<S>& k : scheme_keys(s))
    if (const auto v = k.number ? k.number(s) : std::nullopt)
      if (auto note = detail::rule_note(fmt::format("{}.{}", S::name, k.name), *v, k.rule)) out.push_back(*note);
  return out;
}

}  // namespace scaling
}  // namespace ropekit
