// Method names: every spelling of spec fixed-basis.md section 2, readable spellings, and the
// names the reference misreads.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/encodings/method.hpp"

using namespace ropekit;

namespace {
template <class T>
const T& as(const Method& m) {
  REQUIRE(std::holds_alternative<T>(m));
  return std::get<T>(m);
}
}  // namespace

TEST_CASE("reference names parse to the spec's families and parameters") {
  CHECK(std::holds_alternative<method::Nope>(parse_method("nope")));
  CHECK(std::holds_alternative<method::Rope>(parse_method("rope")));
  CHECK(std::holds_alternative<method::Alibi>(parse_method("alibi")));
  CHECK(std::holds_alternative<method::RopeAlibi>(parse_method("rope_alibi")));
  CHECK(!as<method::DampedRope>(parse_method("damped_rope")).gamma);
  CHECK(std::holds_alternative<method::RealJordan>(parse_method("real_jordan")));
  CHECK(std::holds_alternative<method::DirectSum>(parse_method("direct_sum")));

  const Method jordan_rope = parse_method("jordan_rope");
  const auto& jr = as<method::Jordan>(jordan_rope);
  CHECK(jr.m == 2);
  CHECK(!jr.gamma);
  CHECK(!jr.bounded_tau);
  // Rule 1: gamma := 0. Rule 2: bounded_tau := false, gamma kept.
  CHECK(as<method::Jordan>(parse_method("jordan_no_gamma")).gamma == 0.0);
  CHECK(as<method::Jordan>(parse_method("jordan_raw_tau")).bounded_tau == false);
  CHECK(!as<method::Jordan>(parse_method("jordan_raw_tau")).gamma);
  CHECK(as<method::Jordan>(parse_method("jordan_m3")).m == 3);
  CHECK(as<method::Jordan>(parse_method("jordan_m4")).m == 4);
}

TEST_CASE("jordan_exact: order 2 - c = NNN/100 from the first cNNN token - default 1") {
  struct Case {
    const char* name;
    double c;
  };
  for (const auto& k : {Case{"jordan_exact", 1.0}, Case{"jordan_exact_scaled", 1.0}, Case{"jordan_exact_c010", 0.1},
                        Case{"jordan_exact_c150", 1.5}, Case{"jordan_exact_c1", 0.01},
                        Case{"jordan_exact_scaled_c010", 0.1}}) {
    CAPTURE(k.name);
    const Method parsed = parse_method(k.name);
    const auto& m = as<method::JordanScaled>(parsed);
    CHECK(m.m == 2);
    CHECK(m.c == doctest::Approx(k.c).epsilon(1e-15));
  }
}

TEST_CASE("digit suffixes: the run of digits after the prefix - defaults when absent") {
  CHECK(as<method::RopeMatched>(parse_method("rope_matched")).k == 2);
  CHECK(as<method::RopeMatched>(parse_method("rope_matched_m3")).k == 3);
  CHECK(as<method::RopeMatched>(parse_method("rope_matched_m0")).k == 1);  // k' = max(1, k)
  CHECK(as<method::DirectSumPoly>(parse_method("direct_sum_poly")).k == 4);
  CHECK(as<method::DirectSumPoly>(parse_method("direct_sum_poly_m4")).k == 4);
  CHECK(as<method::DirectSumPoly>(parse_method("direct_sum_poly_m1")).k == 2);  // k' = max(2, k)
  const Method scaled = parse_method("jordan_scaled_m4_c010");
  const auto& s = as<method::JordanScaled>(scaled);
  CHECK(s.m == 4);
  CHECK(s.c == doctest::Approx(0.1).epsilon(1e-15));
  CHECK(as<method::JordanScaled>(parse_method("jordan_scaled")).m == 3);
  CHECK(as<method::JordanScaled>(parse_method("jordan_scaled")).c == 1.0);
  CHECK(as<method::JordanScaled>(parse_method("jordan_scaled_m1")).m == 2);  // m = max(2, k)
}

TEST_CASE("readable spellings parse - and spelling round-trips every family") {
  const Method scaled = parse_method("jordan-scaled:m=4,c=0.1");
  const auto& s = as<method::JordanScaled>(scaled);
  CHECK(s.m == 4);
  CHECK(s.c == 0.1);
  const Method jordan = parse_method("jordan:m=3,gamma=0,tau=raw");
  const auto& j = as<method::Jordan>(jordan);
  CHECK(j.m == 3);
  CHECK(j.gamma == 0.0);
  CHECK(j.bounded_tau == false);
  for (const char* name :
       {"nope", "rope", "rope_matched_m3", "alibi", "rope_alibi", "damped_rope", "real_jordan", "direct_sum",
        "direct_sum_poly_m4", "jordan_rope", "jordan_no_gamma", "jordan_raw_tau", "jordan_m3", "jordan_m4",
        "jordan_exact_c010", "jordan_scaled_m4_c010", "damped-rope:gamma=0.001", "real-jordan:tau=raw",
        "direct-sum:gamma=0.5,tau=bounded", "direct-sum-poly:k=3,tau=raw", "jordan:m=5", "jordan-scaled:m=2,c=0"}) {
    CAPTURE(name);
    const Method m = parse_method(name);
    const std::string readable = spelling(m);
    CAPTURE(readable);
    CHECK(spelling(parse_method(readable)) == readable);
    CHECK(parse_method(readable).index() == m.index());
  }
}

TEST_CASE("jordan_exact with an order token is rejected with the explicit spelling") {
  try {
    parse_method("jordan_exact_m4_c010");
    FAIL("jordan_exact_m4_c010 must be rejected");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CAPTURE(msg);
    CHECK(msg.find("jordan_scaled_m4_c010") != std::string::npos);
    CHECK(msg.find("jordan-scaled:m=4,c=0.1") != std::string::npos);
  }
}

TEST_CASE("unknown and malformed method names throw InputError naming the value") {
  for (const char* bad : {"", "ropee", "jordan_m5", "jordan_exact_foo", "jordan_exact_c010_c020", "rope_matched_m3x",
                          "jordan_scaled_c010_m4", "jordan:m=0", "jordan:m=99", "jordan:gamma=-1", "jordan:gamma=nan",
                          "jordan-scaled:c=-0.1", "jordan:tau=sideways", "rope:k=2", "jordan:m=2,m=3", "jordan:m",
                          "wavelet:x=1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_method(bad), InputError);
  }
  try {
    parse_method("ropee");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("'ropee'") != std::string::npos);
    CHECK(std::string(e.what()).find("jordan_scaled_m<k>") != std::string::npos);  // lists the known names
  }
}

TEST_CASE("alias agreement: every reference name and its readable spelling read the spec's parameter") {
  // The spec (fixed-basis.md section 2) defines the parameter of each suffixed name:
  //   rope_matched_m<k>     k' = max(1, k),    M = max(1, floor(F / k')), count 1 + 2M
  //   direct_sum_poly_m<k>  k' = max(2, k),    count 2F + k'
  //   jordan_scaled_m<k>    m  = max(2, k),    count 1 + 2mF
  // The readable spelling with the spec's value must be the same method; a readable value the spec never
  // produces (below its minimum) is refused instead of read differently.
  struct Rule {
    const char* ref;       // reference prefix
    const char* readable;  // readable family and key
    int min;
  };
  for (const auto& r : {Rule{"rope_matched_m", "rope-matched:k=", 1}, Rule{"direct_sum_poly_m", "direct-sum-poly:k=", 2},
                        Rule{"jordan_scaled_m", "jordan-scaled:m=", 2}}) {
    for (int k : {0, 1, 2, 3, 4, 7, 32}) {
      const int spec = std::max(r.min, k);
      const std::string ref = r.ref + std::to_string(k), readable = r.readable + std::to_string(spec);
      CAPTURE(ref);
      const Method a = parse_method(ref), b = parse_method(readable);
      CHECK(spelling(a) == spelling(b));
      CHECK(a.index() == b.index());
      if (k < r.min) {
        const std::string key(1, r.readable[std::string(r.readable).find(':') + 1]);
        const std::string hint = fmt::format("the reference's {}{} means {} = {}", r.ref, k, key, r.min);
        CHECK_THROWS_WITH_AS(parse_method(r.readable + std::to_string(k)), doctest::Contains(hint.c_str()), InputError);
      }
    }
  }
  // The unsuffixed names and rules 1-3 of the spec, each with the readable spelling of its definition.
  for (const auto& [ref, readable] : std::vector<std::pair<const char*, const char*>>{
           {"rope_matched", "rope-matched:k=2"}, {"direct_sum_poly", "direct-sum-poly:k=4"},
           {"jordan_scaled", "jordan-scaled:m=3,c=1"}, {"jordan_rope", "jordan:m=2"},
           {"jordan_no_gamma", "jordan:m=2,gamma=0"}, {"jordan_raw_tau", "jordan:m=2,tau=raw"},
           {"jordan_m3", "jordan:m=3"}, {"jordan_m4", "jordan:m=4"}, {"jordan_exact", "jordan-scaled:m=2,c=1"},
           {"jordan_exact_scaled", "jordan-scaled:m=2,c=1"}, {"jordan_exact_c010", "jordan-scaled:m=2,c=0.1"},
           {"jordan_exact_c1", "jordan-scaled:m=2,c=0.01"}, {"jordan_scaled_m4_c150", "jordan-scaled:m=4,c=1.5"},
           {"jordan_scaled_m2_c010", "jordan-scaled:m=2,c=0.1"}, {"damped_rope", "damped-rope"},
           {"rope_alibi", "rope-alibi"}, {"direct_sum", "direct-sum"}, {"real_jordan", "real-jordan"}}) {
    const auto ref_ = ref;  // a copy: CAPTURE's lambda cannot take a structured binding (clang 14)
    CAPTURE(ref_);
    CHECK(spelling(parse_method(ref)) == spelling(parse_method(readable)));
  }
  // The spec's column counts for F = 16 (written out: 1 + 2 max(1, 16 / k'), 2F + k', 1 + 2 m F).
  CHECK(as<method::RopeMatched>(parse_method("rope_matched_m0")).k == 1);
  CHECK(as<method::DirectSumPoly>(parse_method("direct_sum_poly_m1")).k == 2);
  CHECK(as<method::DirectSumPoly>(parse_method("direct-sum-poly:k=2")).k == 2);
  CHECK(as<method::JordanScaled>(parse_method("jordan_scaled_m1")).m == 2);
  CHECK(as<method::JordanScaled>(parse_method("jordan-scaled:m=2")).m == 2);
  // rope_matched has no upper bound in the spec: a large k is M = 1 under both spellings.
  CHECK(as<method::RopeMatched>(parse_method("rope_matched_m1000")).k == 1000);
  CHECK(as<method::RopeMatched>(parse_method("rope-matched:k=1000")).k == 1000);
}

TEST_CASE("suffixes beyond every integer type are refused, not thrown as std::out_of_range") {
  const std::string huge_c = "jordan_exact_c" + std::string(400, '9');  // c = 10^400 / 100: not a float64
  for (const std::string& name : {std::string("direct_sum_poly_m99999999999"), std::string("rope_matched_m99999999999"),
                                 std::string("jordan_scaled_m99999999999"), std::string("jordan_exact_m99999999999"),
                                 std::string("jordan_m99999999999"), std::string("direct_sum_poly_m33"),
                                 std::string("jordan_scaled_m33_c010"), huge_c}) {
    CAPTURE(name);
    CHECK_THROWS_AS(parse_method(name, "ropekit features: --method"), InputError);
  }
  CHECK_THROWS_WITH_AS(parse_method("direct_sum_poly_m99999999999", "ropekit features: --method"),
                       doctest::Contains("ropekit features: --method 'direct_sum_poly_m99999999999': k = 99999999999"),
                       InputError);
  CHECK(as<method::RopeMatched>(parse_method("rope_matched_m2147483647")).k == 2147483647);
}
