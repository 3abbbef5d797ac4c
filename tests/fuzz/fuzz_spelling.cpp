// Fuzz harness: the generic "family:key=value,..." parser (Spelling), nested values name(key=value,...)
// and lists [a,b,...] included, with every typed accessor; the printers (format_spelling, format_nested)
// in a round trip parse -> format -> parse, down every nested value; and the strict number parsers
// parse_double / parse_int on the whole input.

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/core/spelling.hpp"

using namespace ropekit;

namespace {

// Each accessor may refuse a value (InputError); the others still run on their own keys.
template <class Take>
void quietly(Take&& take) {
  try {
    take();
  } catch (const InputError&) {
  }
}

std::string show(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [k, v] : params) out += fmt::format("[{}]=[{}] ", k, v);
  return out;
}

// `s` printed and parsed again has the same family and parameters; so has each nested value in it, down
// to the innermost. `depth` counts the brackets entered (at most kMaxSpellingDepth: the parser refused
// anything deeper); a word read as a spelling ("x=a:b=c:d=e": a, then c) enters none, but is shorter.
void round_trip(const Spelling& s, bool nested, int depth) {
  fuzz::require(depth <= kMaxSpellingDepth, fmt::format("nesting depth {} passed the parser", depth));
  const auto params = s.params();
  const std::string printed = nested ? format_nested(s.family(), params) : format_spelling(s.family(), params);
  const Spelling back = fuzz::must("parse of " + printed, [&] {
    return nested ? Spelling::parse_nested(printed, "fuzz") : Spelling::parse(printed, "fuzz");
  });
  fuzz::require(back.family() == s.family() && back.params() == params,
                fmt::format("'{}' printed as '{}' parses as family '{}' {} (was '{}' {})", s.text(), printed,
                            back.family(), show(back.params()), s.family(), show(params)));
  for (const auto& param : params) {
    const std::string& key = param.first;  // a plain name: clang before 16 captures no structured binding
    Spelling copy = s;
    const auto items = fuzz::must("take_items", [&] { return copy.take_items(key); });
    fuzz::require(items.has_value() && !items->empty(), fmt::format("take_items('{}') of '{}' empty", key, s.text()));
    for (const std::string& item : *items) {
      fuzz::require(!item.empty(), fmt::format("an empty item of '{}' in '{}'", key, s.text()));
      if (item.front() == '[') {  // a list in a list: its items through a positional list
        round_trip(fuzz::must("parse of a list item", [&] { return Spelling::parse("l:" + item, "fuzz"); }), false,
                   depth + 1);
      } else if (item.find('(') != std::string::npos) {  // name(...): was checked with the outer spelling
        round_trip(fuzz::must("parse_nested of an item", [&] { return Spelling::parse_nested(item, "fuzz"); }), true,
                   depth + 1);
      } else {  // a word: a spelling only if it reads as one ("a:b" does not)
        quietly([&] { round_trip(Spelling::parse_nested(item, "fuzz"), true, depth); });
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  return fuzz::run([&] {
    if (const auto d = parse_double(text)) {
      // A strict parse of the whole string is also a parse of its first token as a list item.
      fuzz::require(!std::isnan(*d) || text.find_first_of("nN") != std::string_view::npos,
                    fmt::format("parse_double('{}') = NaN", text));
    }
    if (const auto i = parse_int(text)) {
      const auto d = parse_double(text);
      // Every integer strtoll accepts is also a decimal number strtod accepts, at most 2^63 away in rounding.
      fuzz::require(d.has_value() && std::fabs(*d - static_cast<double>(*i)) <= std::ldexp(1.0, 11),
                    fmt::format("parse_int('{}') = {} but parse_double gives {}", text, *i, d ? *d : -1.0));
    }

    Spelling s = Spelling::parse(text, "fuzz");
    fuzz::require(!s.family().empty(), fmt::format("empty family from '{}'", text));
    round_trip(s, false, 0);
    quietly([&] {
      if (const auto v = s.take_double("x")) fuzz::require(std::isfinite(*v), fmt::format("x = {}", *v));
    });
    quietly([&] {
      if (const auto v = s.take_doubles("W"))
        for (double w : *v) fuzz::require(std::isfinite(w), fmt::format("W item {}", w));
    });
    quietly([&] { s.take_int("k"); });
    quietly([&] { s.take_bool("b"); });
    quietly([&] { s.take_word("tau"); });
    quietly([&] { s.take_text("t"); });
    quietly([&] {  // a nested spelling: its own accessors, and finish on it as a caller would
      if (auto n = s.take_spelling("s")) {
        quietly([&] { n->take_double("x"); });
        quietly([&] { n->take_doubles(""); });
        n->finish("x");
      }
    });
    quietly([&] {
      if (auto parts = s.take_spellings("")) {
        for (auto& p : *parts) {
          quietly([&] { p.take_int("k"); });
          quietly([&] {
            if (auto inner = p.take_spelling("s")) inner->finish("");
          });
          quietly([&] { p.finish("k, s"); });
        }
      }
    });
    quietly([&] {
      if (const auto items = s.take_items("L"))
        for (const auto& item : *items) quietly([&] { Spelling::parse_nested(item, "fuzz").finish(""); });
    });
    s.finish("x, W, k, b, tau, t, s, L, [...]");
  });
}
