// error.hpp: one message shape, "<where>: <name> = <value> (must be <constraint>)", with parameters spelled
// as the user typed them (options, config keys).
#include <doctest/doctest.h>

#include <cmath>

#include "ropekit/core/error.hpp"

using namespace ropekit;

TEST_CASE("Where spells parameters as options, as config keys, or as renamed") {
  const Where opt = Where::options("ropekit lie check");
  CHECK(opt.name("max_exp") == "--max-exp");
  CHECK(opt.name("window") == "--window");
  CHECK(opt.name("--lags") == "--lags");  // already an option
  Where key("config c.yaml", "toy.");
  key.rename("theta", "position.theta");
  CHECK(key.name("num_freqs") == "toy.num_freqs");
  CHECK(key.name("theta") == "position.theta");
  CHECK(Where("basis parameters").name("num_freqs") == "num_freqs");
}

TEST_CASE("every check gives the one message shape with the spelled name") {
  const Where w = Where::options("ropekit jordan positionwise");
  CHECK_THROWS_WITH_AS(check_in_range(w, "m", 0, 1, 32),
                       "ropekit jordan positionwise: --m = 0 (must be an integer in [1, 32])", InputError);
  CHECK_THROWS_WITH_AS(check_nonnegative(w, "c", -1), "ropekit jordan positionwise: --c = -1 (must be finite and >= 0)",
                       InputError);
  CHECK_THROWS_WITH_AS(check_positive(w, "train_context", NAN),
                       "ropekit jordan positionwise: --train-context = nan (must be finite and > 0)", InputError);
  CHECK_THROWS_WITH_AS(check_finite(w, "eta", INFINITY), "ropekit jordan positionwise: --eta = inf (must be finite)",
                       InputError);
  CHECK_THROWS_WITH_AS(check_at_least(w, "window", 1, 2),
                       "ropekit jordan positionwise: --window = 1 (must be an integer >= 2)", InputError);
  CHECK_NOTHROW(check_in_range(w, "m", 32, 1, 32));
}
