// Readable spellings "family:key=value,..." and number lists.
#include <doctest/doctest.h>

#include <cmath>

#include "ropekit/error.hpp"
#include "ropekit/spelling.hpp"

using namespace ropekit;

TEST_CASE("a spelling gives its family and typed parameters - a bare value continues a list") {
  auto s = Spelling::parse(" sinc:W=1,2.5,dims=2 ", "spectrum");
  CHECK(s.family() == "sinc");
  CHECK(s.take_doubles("W") == std::vector<double>{1, 2.5});
  CHECK(s.take_int("dims") == 2);
  CHECK(!s.take_double("W"));  // consumed
  CHECK_NOTHROW(s.finish(""));
}

TEST_CASE("spelling errors: unknown key - repeated key - bad number - NaN - missing '='") {
  auto s = Spelling::parse("jordan:m=3,z=1", "method");
  s.take_int("m");
  CHECK_THROWS_WITH_AS(s.finish("m"), doctest::Contains("unknown parameter 'z'"), InputError);
  CHECK_THROWS_AS(Spelling::parse("jordan:m=3,m=4", "method"), InputError);
  CHECK_THROWS_AS(Spelling::parse("jordan:3", "method"), InputError);
  CHECK_THROWS_AS(Spelling::parse(":m=3", "method"), InputError);
  auto t = Spelling::parse("a:x=abc,y=nan,k=1.5", "t");
  CHECK_THROWS_AS(t.take_double("x"), InputError);
  CHECK_THROWS_AS(t.take_double("y"), InputError);
  CHECK_THROWS_AS(t.take_int("k"), InputError);
}

TEST_CASE("number lists: items - ranges with an excluded stop - steps") {
  CHECK(parse_number_list("0.5,1,2,5", "--lags") == std::vector<double>{0.5, 1, 2, 5});
  CHECK(parse_number_list("0:4", "--lags") == std::vector<double>{0, 1, 2, 3});
  CHECK(parse_number_list("0:10:4,100", "--lags") == std::vector<double>{0, 4, 8, 100});
  CHECK(parse_number_list("-2", "--lags") == std::vector<double>{-2});
  for (const char* bad : {"", "1,,2", "a", "nan", "1:0", "0:5:0", "0:5:-1", "1:2:3:4", "inf"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_number_list(bad, "--lags"), InputError);
  }
  CHECK_THROWS_AS(parse_number_list("0:100", "--lags", 10), InputError);
  CHECK(parse_number_list("0:100", "--lags", 100).size() == 100);  // exactly at the cap
}

TEST_CASE("number lists: a range never reaches its stop, whatever the rounding of (stop - start)/step") {
  // (0.4 - 0.1)/0.1 rounds to 3.0000000000000004 and (2.1 - 0)/0.3 to 7.000000000000001: a count taken from
  // them gave 4 and 8 values, the last equal to stop (found by tests/fuzz/fuzz_number_list.cpp). The values
  // below are start + i step in float64, written out: 0.1 + 2 * 0.1 = 0.30000000000000004 and 6 * 0.3 = 1.7999999999999998.
  CHECK(parse_number_list("0.1:0.4:0.1", "--lags") == std::vector<double>{0.1, 0.2, 0.30000000000000004});
  const auto v = parse_number_list("0:2.1:0.3", "--lags");
  REQUIRE(v.size() == 7);
  CHECK(v.back() == 1.7999999999999998);
  // Where the step is below the spacing of doubles near start, the values repeat but stay below stop.
  for (double x : parse_number_list("1e17:100000000000000016", "--lags")) CHECK(x < 100000000000000016.0);
}

TEST_CASE("strict number parsing rejects trailing characters") {
  CHECK(parse_double("1e-4") == 1e-4);
  CHECK(!parse_double("1e-4x"));
  CHECK(!parse_double(""));
  CHECK(parse_int("-12") == -12);
  CHECK(!parse_int("12.0"));
  CHECK(!parse_int("99999999999999999999999"));
}
