#pragma once
// One table per enum maps values to the words users type and read ("iid", "cayley", "csv"): to_text,
// from_text and the list of choices for messages all read the same table, so they cannot drift apart.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"

namespace ropekit {

template <class E, std::size_t N>
using EnumTable = std::array<std::pair<E, std::string_view>, N>;

/// The word of `value` (the first entry with that value; later entries are accepted aliases).
template <class E, std::size_t N>
std::string_view to_text(const EnumTable<E, N>& table, E value) {
  for (const auto& [v, word] : table)
    if (v == value) return word;
  return "?";
}

/// "a, b or c": the canonical words (first entry per value), for messages.
template <class E, std::size_t N>
std::string choices(const EnumTable<E, N>& table) {
  std::string out;
  std::size_t count = 0, seen = 0;
  for (std::size_t i = 0; i < N; ++i)
    if (to_text(table, table[i].first) == table[i].second) ++count;
  for (std::size_t i = 0; i < N; ++i) {
    if (to_text(table, table[i].first) != table[i].second) continue;
    out += seen == 0 ? "" : (seen + 1 == count ? " or " : ", ");
    out += table[i].second;
    ++seen;
  }
  return out;
}

template <class E, std::size_t N>
std::optional<E> from_text(const EnumTable<E, N>& table, std::string_view word) {
  for (const auto& [v, w] : table)
    if (w == word) return v;
  return std::nullopt;
}

/// @throws InputError "<where>: <name> = '<word>' (must be a, b or c)".
template <class E, std::size_t N>
E parse_enum(const EnumTable<E, N>& table, std::string_view word, const Where& where, std::string_view name) {
  if (auto v = from_text(table, word)) return *v;
  throw_bad_value(where, name, fmt::format("'{}'", word), choices(table));
}

}  // namespace ropekit
