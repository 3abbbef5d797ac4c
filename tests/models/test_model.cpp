// lib/ropekit/models/model.hpp: what a layer type's window hides (window_span), the lag every command masks.

#include <doctest/doctest.h>

#include <stdexcept>

#include "ropekit/models/model.hpp"

using namespace ropekit;

TEST_CASE("window_span: the smallest lag a sliding or chunked layer cannot see") {
  LayerType l;
  CHECK_FALSE(window_span(l).has_value());  // "": every earlier position
  l.window = "sliding 1024";                // transformers: key j visible from query i when i - j < 1024
  CHECK(window_span(l) == 1024);
  l.window = "chunked 8192";  // Llama 4: one chunk of 8192 positions, so lags up to 8191
  CHECK(window_span(l) == 8192);
  for (const char* bad : {"sliding", "sliding 0", "sliding 12x", "window 4"}) {
    l.window = bad;
    CHECK_THROWS_AS(window_span(l), std::logic_error);
  }
}
