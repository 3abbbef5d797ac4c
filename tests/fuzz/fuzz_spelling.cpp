// Fuzz harness: the generic "family:key=value,..." parser (Spelling) with every typed accessor, and the
// strict number parsers parse_double / parse_int on the whole input.

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
    s.finish("x, W, k, b, tau");
  });
}
