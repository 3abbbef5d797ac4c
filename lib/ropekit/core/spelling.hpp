#pragma once
// Readable spellings of parameterised families, shared by methods, targets, spectra and encodings:
//   family[:key=value[,key=value...]]      e.g. "jordan-scaled:m=4,c=0.1"
// A bare value after a key=value continues that key's list: "sinc:W=1,2,dims=2" gives W = [1, 2].
//
// Spellings nest (docs: encodings.md section 2). A value is one of
//   a word or number        base=5e5, tau=raw              (no brackets; may hold ':' and '=' as before)
//   a nested spelling       scaling=yarn(factor=32,orig=4096), spectrum=gaussian(sigma=20), or a bare name
//   a list                  short=[1,1.05,1.1], parts=[rope(dim=64),alibi]
// List items are values without a key: numbers, words, name(key=value,...) or lists (no "key=value" item:
// write rope(dim=64), not rope:dim=64, inside [...]). Inside name(...) the same key=value list as after a
// colon. A positional value (key "") may come first: after the colon only as a list, "direct-sum:[rope,alibi],L=4096";
// inside parentheses any value, "y(1)" (y with "" = 1). "family(key=value,...)" is also accepted where a
// whole spelling is expected (parse, parse_nested) and means "family:key=value,...".
// Items are split only at commas outside () and []. A bare value continues only a plain list: "W=[1,2],3",
// "scaling=yarn(factor=2),x" and "direct-sum:[rope],alibi" are refused. Brackets nest at most
// kMaxSpellingDepth deep. Every syntax error is an InputError "<what> '<spelling>': <problem> at character N"
// (N counted from 1 in the spelling as quoted).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/core/number_text.hpp"

namespace ropekit {

/// How deeply () and [] may nest in one spelling; deeper is refused with InputError.
inline constexpr int kMaxSpellingDepth = 16;

/// One parsed spelling. Accessors consume keys; finish() rejects any key nobody asked for.
/// A nested spelling (take_spelling, take_spellings) remembers the outer spelling and its path: its
/// messages read "encoding 'rope:scaling=yarn(factor=x)': scaling.factor = 'x' (must be a number)". Its
/// keys are its own: the caller calls finish() on every nested spelling it takes, as on the outer one.
class Spelling {
 public:
  /// "family" or "family:key=value,..." (or "family(key=value,...)"), values as above.
  /// @throws InputError on an empty family, an empty key or item, a repeated key, a missing '=',
  /// unbalanced or too deeply nested brackets, or text after a closing bracket.
  static Spelling parse(std::string_view text, std::string_view what);
  /// A nested value on its own: "name", "name(key=value,...)" or "name:key=value,...", e.g. an item of
  /// take_items(); family() is the name. The same grammar as parse; messages quote `text` after `what`.
  static Spelling parse_nested(std::string_view text, std::string_view what);

  const std::string& family() const { return family_; }
  /// This spelling's own text ("yarn(factor=32)" for a nested one), trimmed.
  const std::string& text() const { return text_; }
  const std::string& what() const { return what_; }
  /// Where messages say the value came from: "<what> '<outermost spelling>'".
  std::string where() const;
  /// A key as messages name it: "factor" at the top, "scaling.factor" in a nested spelling, "parts[1].dim"
  /// in an item of a list; "" (the positional value) is named by the path alone, or "[...]" at the top.
  std::string name(std::string_view key) const;
  bool has_params() const { return !params_.empty(); }
  /// The keys not yet taken with their values' text (a continued list joined by ','), keys in sorted
  /// order ("" first): format_spelling(family(), params()) spells the same parameters.
  std::vector<std::pair<std::string, std::string>> params() const;

  /// Each @throws InputError naming the spelling, the key, the value and the constraint. They take a
  /// word or number: a list or nested value is refused ("must be a number, not a list"), except by
  /// take_doubles, which reads both W=1,2 and W=[1,2] (every item a number).
  std::optional<double> take_double(std::string_view key);
  std::optional<std::int64_t> take_int(std::string_view key);
  std::optional<bool> take_bool(std::string_view key);
  std::optional<std::string> take_word(std::string_view key);
  std::optional<std::vector<double>> take_doubles(std::string_view key);

  /// The value as a nested spelling: "yarn(factor=32)" or a bare "linear" (family only). Refuses a list
  /// and a continued list. The caller calls finish() on the result.
  std::optional<Spelling> take_spelling(std::string_view key);
  /// Each item of a list value as a nested spelling (a single non-list value: one item), named
  /// "key[i]" (i from 0) in messages: "direct-sum:[rope(dim=64),alibi]" and key "" give rope, alibi.
  std::optional<std::vector<Spelling>> take_spellings(std::string_view key);
  /// The raw text of each item of a list value ("[1,rope(dim=4)]" -> "1", "rope(dim=4)"); a continued list
  /// W=1,2 gives its values; any other value is one item. Parse items with parse_double or parse_nested.
  std::optional<std::vector<std::string>> take_items(std::string_view key);
  /// The raw text of the value, nested or not: "yarn(factor=32,orig=4096)", "[1,2]"; W=1,2 gives "1,2".
  std::optional<std::string> take_text(std::string_view key);

  /// @throws InputError if keys remain that the family does not know; lists the known keys.
  void finish(std::string_view known_keys) const;

 private:
  static Spelling parse_in(std::string_view text, std::string_view what, std::shared_ptr<const std::string> root,
                           std::string path);
  std::optional<std::vector<std::string>> take(std::string_view key);
  /// The single word or number of `key`; refuses a list, a nested value and a continued list.
  std::optional<std::string> take_scalar(std::string_view key, std::string_view expected);
  std::string what_;
  /// The outermost spelling, as messages quote it; shared by every nested spelling (a copy each made parsing a sum
  /// of N parts quadratic: 8000 parts of 12 characters took 776 MB; issue 20 item 11).
  std::shared_ptr<const std::string> root_;
  std::string path_;  ///< "" at the top; "scaling", "parts[1]" in nested spellings
  std::string text_;
  std::string family_;
  std::map<std::string, std::vector<std::string>, std::less<>> params_;
};

/// "family:k=v,k2=v2" ("family" without keys). A key "" prints its value first without "key=": after the
/// colon that must be a list "[...]"; any other "" value gives the nested form "family(v,k2=v2)", which
/// parse reads too. Values are written as given (format_number for numbers, format_nested for spellings).
std::string format_spelling(std::string_view family, const std::vector<std::pair<std::string, std::string>>& keys);
/// "family(k=v,k2=v2)" ("family" without keys), a key "" as in format_spelling.
std::string format_nested(std::string_view family, const std::vector<std::pair<std::string, std::string>>& keys);
/// "[a,b,c]".
std::string format_list(const std::vector<std::string>& items);
/// "[1,0.5,...]": numbers as format_number writes them (a frequency or factor list in a spelling).
std::string format_numbers(const std::vector<double>& values);

}  // namespace ropekit
