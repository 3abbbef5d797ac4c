// Readable spellings "family:key=value,..." and number lists.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"

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
  CHECK(parse_int("12.0") == 12);  // integer-valued: what people type
  CHECK(!parse_int("12.5"));
  CHECK(!parse_int("99999999999999999999999"));
}

TEST_CASE("integers as people type them are read exactly - fractions and overflow are classified, never rounded") {
  using Kind = IntegerText::Kind;
  struct Case {
    const char* text;
    Kind kind;
    bool negative;
    std::uint64_t magnitude;
  };
  // Expected values written out by hand from the decimal meaning of each text.
  for (const auto& c : {Case{"100000", Kind::integer, false, 100000}, Case{"1e5", Kind::integer, false, 100000},
                        Case{"2.5e3", Kind::integer, false, 2500}, Case{"1.0", Kind::integer, false, 1},
                        Case{"+3", Kind::integer, false, 3}, Case{"-7", Kind::integer, true, 7},
                        Case{" 42 ", Kind::integer, false, 42}, Case{"0.0e5", Kind::integer, false, 0},
                        Case{"-0", Kind::integer, false, 0}, Case{"1E2", Kind::integer, false, 100},
                        Case{"120e-1", Kind::integer, false, 12}, Case{"18446744073709551615", Kind::integer, false, UINT64_MAX},
                        Case{"1.8446744073709551615e19", Kind::integer, false, UINT64_MAX},
                        Case{"1.5", Kind::fraction, false, 0}, Case{"1e-3", Kind::fraction, false, 0},
                        Case{"2.55e1", Kind::fraction, false, 0}, Case{"18446744073709551616", Kind::too_large, false, 0},
                        Case{"1e30", Kind::too_large, false, 0}, Case{"1e999999999999", Kind::too_large, false, 0},
                        Case{"abc", Kind::not_a_number, false, 0}, Case{"1e", Kind::not_a_number, false, 0},
                        Case{"", Kind::not_a_number, false, 0}, Case{"0x10", Kind::not_a_number, false, 0},
                        Case{"1e5x", Kind::not_a_number, false, 0}, Case{".", Kind::not_a_number, false, 0}}) {
    CAPTURE(c.text);
    const IntegerText t = read_integer_text(c.text);
    CHECK(static_cast<int>(t.kind) == static_cast<int>(c.kind));
    if (c.kind == Kind::integer) {
      CHECK(t.negative == c.negative);
      CHECK(t.magnitude == c.magnitude);
    }
  }
  CHECK(parse_int("-9223372036854775808") == INT64_MIN);
  CHECK(parse_int("9223372036854775807") == INT64_MAX);
  CHECK(!parse_int("9223372036854775808"));
  CHECK(parse_int("1e18") == 1000000000000000000LL);
  CHECK(!parse_int("1e19"));  // beyond int64
}

TEST_CASE("parse_integer_in and parse_unsigned_in name the option and the range - seeds are never wrapped") {
  const Where w = Where::options("ropekit verify master");
  CHECK(parse_integer_in("1e5", w, "trials", 2, 1LL << 40) == 100000);
  CHECK_THROWS_WITH_AS(parse_integer_in("1.5", w, "trials", 2, 1LL << 40),
                       "ropekit verify master: --trials = 1.5 (must be an integer in [2, 1099511627776])", InputError);
  CHECK_THROWS_WITH_AS(parse_integer_in("1e30", w, "trials", 2, 1LL << 40),
                       "ropekit verify master: --trials = 1e30 (must be an integer in [2, 1099511627776])", InputError);
  CHECK(parse_unsigned_in("18446744073709551615", w, "seed", UINT64_MAX) == UINT64_MAX);
  CHECK(parse_unsigned_in("0", w, "seed", UINT64_MAX) == 0);
  for (const char* bad : {"-1", "18446744073709551616", "1.5", "seed", "-0.5"})
    CHECK_THROWS_WITH_AS(parse_unsigned_in(bad, w, "seed", UINT64_MAX),
                         doctest::Contains(("--seed = " + std::string(bad) + " (must be an integer in [0, 18446744073709551615])").c_str()),
                         InputError);
}

TEST_CASE("a subnormal is a number; overflow parses as inf for the finiteness checks") {
  CHECK(parse_double("4.9e-324") == std::numeric_limits<double>::denorm_min());
  CHECK(parse_double("1e-308") == 1e-308);
  CHECK(std::isinf(*parse_double("1e999")));
}

TEST_CASE("number lists name the command and the option as typed") {
  CHECK_THROWS_WITH_AS(parse_number_list("0,x", Where::options("ropekit features"), "lags"),
                       doctest::Contains("ropekit features: --lags = 'x'"), InputError);
  CHECK_THROWS_WITH_AS(parse_number_list("0:1e9", Where::options("ropekit features"), "--lags", 1u << 20),
                       doctest::Contains("ropekit features: --lags = '0:1e9' (must be at most 1048576 values)"),
                       InputError);
}
