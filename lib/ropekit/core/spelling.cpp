#include "ropekit/core/spelling.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"

namespace ropekit {

namespace {

// A piece of the spelling being parsed and its offset in the text the messages quote ("at character N").
struct Piece {
  std::string_view text;
  std::size_t pos = 0;
};

Piece trimmed(Piece p) {
  while (!p.text.empty() && (p.text.front() == ' ' || p.text.front() == '\t')) p.text.remove_prefix(1), ++p.pos;
  while (!p.text.empty() && (p.text.back() == ' ' || p.text.back() == '\t')) p.text.remove_suffix(1);
  return p;
}

enum class ValueKind { scalar, list, nested };

// The kind of a value that has passed Syntax::check_value: a list starts with '[', a nested value is
// "name(...)" (a '[' anywhere else is refused, so the first bracket of a nested value is its '(').
ValueKind kind_of(std::string_view value) {
  if (!value.empty() && value.front() == '[') return ValueKind::list;
  if (value.find('(') != std::string_view::npos) return ValueKind::nested;
  return ValueKind::scalar;
}

// The pieces of `p` between commas outside () and [] (brackets balanced: checked first).
std::vector<Piece> split_top(Piece p) {
  std::vector<Piece> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < p.text.size(); ++i) {
    const char c = p.text[i];
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') --depth;
    else if (c == ',' && depth == 0) {
      out.push_back({p.text.substr(start, i - start), p.pos + start});
      start = i + 1;
    }
  }
  out.push_back({p.text.substr(start), p.pos + start});
  return out;
}

// The index of the bracket closing the one at `open` (brackets balanced: checked first).
std::size_t matching_close(std::string_view s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[') ++depth;
    else if ((s[i] == ')' || s[i] == ']') && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// The items of the list value "[...]" (checked), untrimmed.
std::vector<Piece> list_items(std::string_view list) {
  return split_top({list.substr(1, list.size() - 2), 1});
}

// Checks the grammar of one spelling `text`, with messages "<head>: <problem>", the head naming the
// spelling as the user typed it ("encoding 'rope:dim=64'"), and "at character N" counted in `text`.
// The head is formed only for a message (a nested part formed it from the whole outer spelling each time).
class Syntax {
 public:
  Syntax(std::function<std::string()> head, std::string_view text) : head_(std::move(head)), text_(text) {}

  [[noreturn]] void fail(std::string_view problem) const { throw InputError(fmt::format("{}: {}", head_(), problem)); }

  // Every bracket closed by its own kind, at most kMaxSpellingDepth deep.
  void check_brackets() const {
    struct Open {
      char c;
      std::size_t pos;
    };
    std::vector<Open> open;
    for (std::size_t i = 0; i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '(' || c == '[') {
        if (open.size() >= static_cast<std::size_t>(kMaxSpellingDepth))
          fail(fmt::format("character {} = '{}' (must be at most {} brackets deep)", i + 1, c, kMaxSpellingDepth));
        open.push_back({c, i});
      } else if (c == ')' || c == ']') {
        if (open.empty()) fail(fmt::format("character {} = '{}' (must close a bracket opened before it)", i + 1, c));
        const char want = open.back().c == '(' ? ')' : ']';
        if (c != want)
          fail(fmt::format("character {} = '{}' (must be '{}', closing the '{}' at character {})", i + 1, c, want,
                           open.back().c, open.back().pos + 1));
        open.pop_back();
      }
    }
    if (!open.empty())
      fail(fmt::format("character {} = '{}' (must be closed by a '{}')", open.back().pos + 1, open.back().c,
                       open.back().c == '(' ? ')' : ']'));
  }

  // A value (trimmed, non-empty): a word or number, name(key=value,...), or [item,...].
  void check_value(Piece v, bool in_list) const {
    const std::size_t b = v.text.find_first_of("()[]");
    if (b == std::string_view::npos) {
      if (in_list && v.text.find('=') != std::string_view::npos)
        fail(fmt::format("list item at character {} = {} (must be a number, a word, name(key=value,...) or [...], "
                         "not key=value)",
                         v.pos + 1, quote(v.text)));
      return;
    }
    const char c = v.text[b];
    if (c == ')' || c == ']')
      fail(fmt::format("character {} = '{}' (must close a bracket opened before it)", v.pos + b + 1, c));
    const std::size_t close = matching_close(v.text, b);
    if (close + 1 != v.text.size()) {
      const Piece after = trimmed({v.text.substr(close + 1), v.pos + close + 1});
      fail(fmt::format("character {} = {} (must be absent: the value ends at the '{}' at character {})", after.pos + 1,
                       quote(after.text), v.text[close], v.pos + close + 1));
    }
    const Piece inner{v.text.substr(b + 1, close - b - 1), v.pos + b + 1};
    if (c == '[') {
      if (b != 0)
        fail(fmt::format("character {} = '[' (must begin the value, not follow {}: a list is a whole value, "
                         "key=[a,b,...])",
                         v.pos + b + 1, quote(v.text.substr(0, b))));
      if (trimmed(inner).text.empty())
        fail(fmt::format("list at character {} = '[]' (must have at least one item)", v.pos + 1));
      for (const Piece& raw : split_top(inner)) {
        const Piece item = trimmed(raw);
        if (item.text.empty()) fail(fmt::format("list item at character {} = '' (must be non-empty)", item.pos + 1));
        check_value(item, true);
      }
      return;
    }
    const std::string_view name = trimmed({v.text.substr(0, b), v.pos}).text;
    if (name.empty())
      fail(fmt::format("character {} = '(' (must follow a name: name(key=value,...))", v.pos + b + 1));
    if (name.find_first_of("=:") != std::string_view::npos)
      fail(fmt::format("name before '(' at character {} = {} (must be a name: name(key=value,...){})", v.pos + b + 1,
                       quote(name), in_list ? " inside [...]" : ""));
    if (trimmed(inner).text.empty())
      fail(fmt::format("character {} = '()' (must hold key=value items: write {} alone)", v.pos + b + 1,
                       bounded(name)));
    std::map<std::string, std::vector<std::string>, std::less<>> ignored;
    parse_params(inner, true, ignored);
  }

  // "key=value,key=value,..." after a colon (paren_form false) or inside name(...) (true), into `out`.
  void parse_params(Piece params, bool paren_form,
                    std::map<std::string, std::vector<std::string>, std::less<>>& out) const {
    const std::vector<Piece> items = split_top(params);
    const std::string* last_key = nullptr;  // the key a bare value continues
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Piece item = trimmed(items[i]);
      if (item.text.empty()) fail(fmt::format("item at character {} = '' (must be key=value)", item.pos + 1));
      const std::size_t eq = item.text.find_first_of("=([");
      if (eq != std::string_view::npos && item.text[eq] == '=') {
        std::string key(trimmed({item.text.substr(0, eq), 0}).text);
        const Piece value = trimmed({item.text.substr(eq + 1), item.pos + eq + 1});
        if (key.empty() || value.text.empty()) fail(fmt::format("item = {} (must be key=value with a key and a value)", quote(item.text)));
        if (out.count(key)) fail(fmt::format("{} = given twice (must be given once)", bounded(key)));
        check_value(value, false);
        auto it = out.emplace(std::move(key), std::vector<std::string>{std::string(value.text)}).first;
        last_key = &it->first;
        continue;
      }
      // A bare value: the positional value (first item), or the next value of the last key's list.
      if (i == 0) {
        if (!paren_form && item.text.front() != '[')
          fail(fmt::format("item = {} (must be key=value: family:key=value,key=value)", quote(item.text)));
        check_value(item, false);
        last_key = &out.emplace(std::string(), std::vector<std::string>{std::string(item.text)}).first->first;
        continue;
      }
      check_value(item, false);
      auto& values = out.at(*last_key);
      if (kind_of(values.back()) != ValueKind::scalar)
        fail(fmt::format("character {} = {} (must be inside [...]: it follows the {} value of '{}', and a bare value "
                         "continues only a list of words and numbers)",
                         item.pos + 1, quote(item.text), kind_of(values.back()) == ValueKind::list ? "list" : "nested",
                         bounded(last_key->empty() ? "[...]" : *last_key)));
      if (kind_of(item.text) != ValueKind::scalar)
        fail(fmt::format("character {} = {} (must be key=value, or a word or number continuing the list before "
                         "it; write key=[a,b,...])",
                         item.pos + 1, quote(item.text)));
      values.emplace_back(item.text);
    }
  }

 private:
  std::function<std::string()> head_;
  std::string_view text_;
};

}  // namespace

Spelling Spelling::parse(std::string_view text, std::string_view what) {
  return parse_in(text, what, std::make_shared<const std::string>(strip_blanks(text)), "");
}

Spelling Spelling::parse_nested(std::string_view text, std::string_view what) {
  return parse_in(text, what, std::make_shared<const std::string>(strip_blanks(text)), "");
}

Spelling Spelling::parse_in(std::string_view text, std::string_view what, std::shared_ptr<const std::string> root,
                            std::string path) {
  Spelling s;
  s.what_ = std::string(what);
  s.root_ = std::move(root);
  s.path_ = std::move(path);
  s.text_ = std::string(strip_blanks(text));
  const std::string_view t = s.text_;
  // A nested value passed these checks as part of the outer spelling, but a word taken as a spelling
  // ("x=a:b" -> "a:b") is checked only here: the message names the outer spelling, the path and the word.
  const Syntax syntax(
      [&s, t] { return s.path_.empty() ? s.where() : fmt::format("{}: {} = {}", s.where(), s.path_, quote(t)); }, t);
  const std::size_t p = t.find_first_of(":()[]");
  s.family_ = std::string(strip_blanks(t.substr(0, p)));
  if (s.family_.empty()) throw_bad_value(s.what_, "name", quote(s.text_), "a non-empty name");
  syntax.check_brackets();
  if (p == std::string_view::npos) return s;
  if (t[p] == ':') {
    syntax.parse_params({t.substr(p + 1), p + 1}, false, s.params_);
  } else if (t[p] == '(') {
    const std::size_t close = matching_close(t, p);
    if (close + 1 != t.size()) {
      const Piece after = trimmed({t.substr(close + 1), close + 1});
      syntax.fail(fmt::format("character {} = {} (must be absent: the spelling ends at the ')' at character {})",
                              after.pos + 1, quote(after.text), close + 1));
    }
    const Piece inner{t.substr(p + 1, close - p - 1), p + 1};
    if (trimmed(inner).text.empty())
      syntax.fail(fmt::format("character {} = '()' (must hold key=value items: write {} alone)", p + 1,
                              bounded(s.family_)));
    syntax.parse_params(inner, true, s.params_);
  } else {
    syntax.fail(fmt::format("character {} = '{}' (must be ':' or '(' after the name {}: family:key=value,...)", p + 1,
                            t[p], quote(t.substr(0, p))));
  }
  return s;
}

std::string Spelling::where() const { return fmt::format("{} {}", what_, quote(root_ ? *root_ : std::string())); }

std::string Spelling::name(std::string_view key) const {
  if (key.empty()) return path_.empty() ? std::string("[...]") : path_;
  if (path_.empty()) return std::string(key);
  return fmt::format("{}.{}", path_, key);
}

std::vector<std::pair<std::string, std::string>> Spelling::params() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, values] : params_) out.emplace_back(key, fmt::format("{}", fmt::join(values, ",")));
  return out;
}

std::optional<std::vector<std::string>> Spelling::take(std::string_view key) {
  auto it = params_.find(key);
  if (it == params_.end()) return std::nullopt;
  auto values = std::move(it->second);
  params_.erase(it);
  return values;
}

std::optional<std::string> Spelling::take_scalar(std::string_view key, std::string_view expected) {
  auto raw = take(key);
  if (!raw) return std::nullopt;
  if (raw->size() != 1)
    throw_bad_value(where(), name(key), fmt::format("{} values", raw->size()), fmt::format("a single {}", expected));
  const ValueKind k = kind_of(raw->front());
  if (k != ValueKind::scalar)
    throw_bad_value(where(), name(key), quote(raw->front()),
                    fmt::format("a single {}, not a {}", expected, k == ValueKind::list ? "list" : "nested value"));
  return std::move(raw->front());
}

std::optional<double> Spelling::take_double(std::string_view key) {
  // A list or nested value is refused before any number is read (take_doubles would read a list).
  const auto it = params_.find(key);
  if (it != params_.end() && it->second.size() == 1 && kind_of(it->second.front()) != ValueKind::scalar)
    take_scalar(key, "number");  // throws: "(must be a single number, not a list)"
  auto v = take_doubles(key);
  if (!v) return std::nullopt;
  if (v->size() != 1) throw_bad_value(where(), name(key), fmt::format("{} values", v->size()), "a single number");
  return v->front();
}

std::optional<std::vector<double>> Spelling::take_doubles(std::string_view key) {
  auto raw = take_items(key);
  if (!raw) return std::nullopt;
  std::vector<double> out;
  for (const auto& r : *raw) {
    auto d = kind_of(r) == ValueKind::scalar ? parse_double(r) : std::nullopt;
    if (!d) throw_bad_value(where(), name(key), quote(r), "a number");
    check_finite(where(), name(key), *d);
    out.push_back(*d);
  }
  return out;
}

std::optional<std::int64_t> Spelling::take_int(std::string_view key) {
  auto raw = take_scalar(key, "integer");
  if (!raw) return std::nullopt;
  auto i = parse_int(*raw);
  if (!i) throw_bad_value(where(), name(key), quote(*raw), "an integer");
  return i;
}

std::optional<bool> Spelling::take_bool(std::string_view key) {
  auto w = take_word(key);
  if (!w) return std::nullopt;
  if (*w == "true" || *w == "1" || *w == "yes") return true;
  if (*w == "false" || *w == "0" || *w == "no") return false;
  throw_bad_value(where(), name(key), quote(*w), "true or false");
}

std::optional<std::string> Spelling::take_word(std::string_view key) { return take_scalar(key, "word"); }

std::optional<Spelling> Spelling::take_spelling(std::string_view key) {
  const std::string full = name(key);
  auto raw = take(key);
  if (!raw) return std::nullopt;
  if (raw->size() != 1)
    throw_bad_value(where(), full, fmt::format("{} values", raw->size()), "a single name or name(key=value,...)");
  if (kind_of(raw->front()) == ValueKind::list)
    throw_bad_value(where(), full, quote(raw->front()), "a name or name(key=value,...), not a list");
  return parse_in(raw->front(), what_, root_, full);
}

std::optional<std::vector<Spelling>> Spelling::take_spellings(std::string_view key) {
  const std::string prefix = key.empty() ? path_ : name(key);
  auto items = take_items(key);
  if (!items) return std::nullopt;
  std::vector<Spelling> out;
  out.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    const std::string path = fmt::format("{}[{}]", prefix, i);
    if (kind_of((*items)[i]) == ValueKind::list)
      throw_bad_value(where(), path, quote((*items)[i]), "a name or name(key=value,...), not a list");
    out.push_back(parse_in((*items)[i], what_, root_, path));
  }
  return out;
}

std::optional<std::vector<std::string>> Spelling::take_items(std::string_view key) {
  auto raw = take(key);
  if (!raw) return std::nullopt;
  if (raw->size() != 1 || kind_of(raw->front()) != ValueKind::list) return raw;
  std::vector<std::string> out;
  for (const Piece& item : list_items(raw->front())) out.emplace_back(trimmed(item).text);
  return out;
}

std::optional<std::string> Spelling::take_text(std::string_view key) {
  auto raw = take(key);
  if (!raw) return std::nullopt;
  return fmt::format("{}", fmt::join(*raw, ","));
}

void Spelling::finish(std::string_view known_keys) const {
  if (params_.empty()) return;
  const auto& [key, values] = *params_.begin();
  const std::string takes = known_keys.empty() ? fmt::format("{} takes no parameters", bounded(family_))
                                               : fmt::format("{} takes {}", bounded(family_), known_keys);
  const std::string value = quote(fmt::format("{}", fmt::join(values, ",")));
  if (key.empty())
    throw InputError(fmt::format("{}: {}positional value = {} (must be key=value: {})", where(),
                                 path_.empty() ? "" : path_ + " ", value, takes));
  throw InputError(fmt::format("{}: {} = {} (must be absent: {})", where(), bounded(name(key)), value, takes));
}

namespace {
std::string format_params(const std::vector<std::pair<std::string, std::string>>& keys) {
  std::string out;
  for (const auto& [key, value] : keys)  // the positional value first
    if (key.empty()) out = value;
  for (const auto& [key, value] : keys) {
    if (key.empty()) continue;
    if (!out.empty()) out += ',';
    out += key;
    out += '=';
    out += value;
  }
  return out;
}
}  // namespace

std::string format_spelling(std::string_view family, const std::vector<std::pair<std::string, std::string>>& keys) {
  if (keys.empty()) return std::string(family);
  for (const auto& [key, value] : keys)
    if (key.empty() && kind_of(strip_blanks(value)) != ValueKind::list) return format_nested(family, keys);
  return fmt::format("{}:{}", family, format_params(keys));
}

std::string format_nested(std::string_view family, const std::vector<std::pair<std::string, std::string>>& keys) {
  if (keys.empty()) return std::string(family);
  return fmt::format("{}({})", family, format_params(keys));
}

std::string format_list(const std::vector<std::string>& items) { return fmt::format("[{}]", fmt::join(items, ",")); }

std::string format_numbers(const std::vector<double>& values) {
  std::vector<std::string> items;
  for (double v : values) items.push_back(format_number(v));
  return format_list(items);
}

}  // namespace ropekit
