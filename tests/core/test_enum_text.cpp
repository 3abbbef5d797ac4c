// One table per enum: words, aliases and the choices listed in messages.

#include <doctest/doctest.h>

#include "reports/table.hpp"
#include "ropekit/core/enum_text.hpp"
#include "ropekit/spectral/rf_estimator.hpp"

using namespace ropekit;

namespace {
enum class Colour { red, green, blue };
constexpr EnumTable<Colour, 4> kColours{
    {{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}, {Colour::red, "crimson"}}};
}  // namespace

TEST_CASE("enum tables: the first word is the name, later ones are aliases; choices lists names only") {
  CHECK(to_text(kColours, Colour::red) == "red");
  CHECK(from_text(kColours, "crimson") == Colour::red);
  CHECK_FALSE(from_text(kColours, "Red").has_value());  // words are exact
  CHECK(choices(kColours) == "red, green or blue");
  try {
    (void)parse_enum(kColours, "mauve", Where::options("ropekit paint"), "colour");
    FAIL("no throw");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "ropekit paint: --colour = 'mauve' (must be red, green or blue)");
  }
}

TEST_CASE("the library's enums read back their own names") {
  for (auto s : {Sampling::iid, Sampling::antithetic, Sampling::stratified}) CHECK(parse_sampling(sampling_name(s)) == s);
  for (auto k : {ContentKind::random, ContentKind::correlated, ContentKind::aligned})
    CHECK(parse_content_kind(content_kind_name(k)) == k);
  CHECK(parse_format("markdown") == Format::md);
  CHECK(parse_format("tex") == Format::latex);
  CHECK_THROWS_AS(parse_format("xml"), InputError);
}
