// generator_io.hpp: the generator file round-trips exactly and refuses malformed input with a message
// naming the place, the value and the constraint.
#include <doctest/doctest.h>

#include <string>

#include "ropekit/core/error.hpp"
#include "ropekit/lie/generator_io.hpp"
#include "ropekit/lie/lie.hpp"

using namespace ropekit;

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_generator_json(text, "G.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("a generator file round-trips bit for bit, with and without Q") {
  GeneratorSet s = generators(gen::Random{5, 3, 0.7, 42});
  s.mixing = orthogonal(random_mixing(MixingKind::cayley, 5, 3));
  for (bool with_q : {true, false}) {
    CAPTURE(with_q);
    GeneratorSet in = s;
    if (!with_q) in.mixing.reset();
    const GeneratorSet out = parse_generator_json(to_generator_json(in, {{"note", "a \"quoted\" value"}}), "mem");
    CHECK(out.dim == 5);
    REQUIRE(out.base.size() == 3);
    for (int i = 0; i < 3; ++i) CHECK((out.base[i].array() == in.base[i].array()).all());
    CHECK(out.mixing.has_value() == with_q);
    if (with_q) CHECK((out.mixing->array() == in.mixing->array()).all());
    CHECK(out.description == in.description);
  }
}

TEST_CASE("a hand-written minimal file is read") {
  const GeneratorSet s = parse_generator_json(R"({"dimension": 2, "generators": [[[0, -1], [1, 0]]]})", "mem");
  CHECK(s.dim == 2);
  CHECK(s.base[0](1, 0) == 1.0);
  CHECK_FALSE(s.mixing.has_value());
}

TEST_CASE("malformed generator files: each refusal names the value and the constraint") {
  const std::string head = R"({"dimension": 2, "generators": )";
  // Non-square: 3 rows for dimension 2.
  CHECK(error_of(head + "[[[0, 1], [1, 0], [0, 0]]]}") == "G.json: generators[0] rows = 3 (must be 2, the dimension)");
  // Ragged: the second row is short.
  CHECK(error_of(head + "[[[0, 1], [1]]]}") ==
        "G.json: generators[0][1] length = 1 (must be 2, the dimension; a matrix is square, not ragged)");
  // Mismatched dimensions: a 3 x 3 generator in a 2-dimensional file.
  CHECK(error_of(head + "[[[0, 1], [1, 0]], [[0, 0, 0], [0, 0, 0], [0, 0, 0]]]}") ==
        "G.json: generators[1] rows = 3 (must be 2, the dimension)");
  // Q of 2 x 3: two rows as required, then a row too long.
  CHECK(error_of(head + R"([[[0, 1], [1, 0]]], "Q": [[1, 0, 0], [0, 1, 0]]})") ==
        "G.json: Q[0] length = 3 (must be 2, the dimension; a matrix is square, not ragged)");
  // NaN and Infinity are not JSON; Python's json module writes them anyway.
  CHECK(error_of(head + "[[[0, NaN], [1, 0]]]}") ==
        "G.json: value at line 1, column 38 = NaN (must be a finite number; JSON has no NaN or Infinity)");
  CHECK(error_of(head + "[[[0, -Infinity], [1, 0]]]}").find("= -Infinity (must be a finite number") != std::string::npos);
  CHECK(error_of(head + "[[[0, 1e999], [1, 0]]]}") == "G.json: number overflow parsing '1e999' (must be a finite number)");
  CHECK(error_of(head + R"([[[0, "1"], [1, 0]]]})") ==
        "G.json: generators[0][0][1] = \"1\" (must be a finite number)");
  // Malformed JSON: truncated.
  CHECK(error_of(head + "[[[0, 1], [1, 0]]").rfind("G.json: malformed JSON (parse error at line 1, column", 0) == 0);
  CHECK(error_of("").rfind("G.json: malformed JSON", 0) == 0);
  // Keys and types.
  CHECK(error_of(R"({"generators": [[[0]]]})") == "G.json: dimension = (missing) (must be an integer in [1, 1024])");
  CHECK(error_of(R"({"dimension": 0, "generators": [[[0]]]})") ==
        "G.json: dimension = 0 (must be an integer in [1, 1024])");
  CHECK(error_of(R"({"dimension": 2.5, "generators": [[[0]]]})") ==
        "G.json: dimension = 2.5 (must be an integer in [1, 1024])");
  CHECK(error_of(R"({"dimension": 1, "generators": []})") ==
        "G.json: generators = [] (must be a non-empty array of n x n matrices)");
  CHECK(error_of(R"({"dimension": 1, "generators": [[[0]]], "q": [[1]]})") ==
        "G.json: key = \"q\" (must be one of format, description, provenance, dimension, generators, Q)");
  CHECK(error_of(R"({"format": "v2", "dimension": 1, "generators": [[[0]]]})") ==
        "G.json: format = \"v2\" (must be \"ropekit-generators/1\")");
  CHECK(error_of("[1, 2]") == "G.json: the top level = a JSON array (must be an object)");
}
