// echo.hpp: errors echo a value whole up to 120 characters, else its first 60 and its length (issue 20 item 15: a
// 10 MB number gave a 10 MB error line).
#include <doctest/doctest.h>

#include <string>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"

using namespace ropekit;

TEST_CASE("bounded keeps short values and cuts long ones to 60 characters and their count") {
  CHECK(bounded("1e300") == "1e300");
  CHECK(bounded(std::string(120, '7')) == std::string(120, '7'));
  CHECK(bounded(std::string(121, '7')) == std::string(60, '7') + "... (121 characters)");
  // Quotes stay around the kept part; the count is of what was inside them.
  CHECK(bounded("'" + std::string(10485760, '1') + "'") == "'" + std::string(60, '1') + "...' (10485760 characters)");
  CHECK(quote("abc") == "'abc'");
  CHECK(quote(std::string(200, 'x')) == "'" + std::string(60, 'x') + "...' (200 characters)");
  // A bounded value is bounded already (throw_bad_value bounds what a caller quoted).
  const std::string once = quote(std::string(10485760, 'x'));
  CHECK(bounded(once) == once);
}

TEST_CASE("bounded cuts between UTF-8 characters and counts characters, not bytes") {
  // 59 ASCII letters then 'é' (2 bytes) at bytes 59-60: the cut at byte 60 would split it, so 59 bytes are kept.
  const std::string text = std::string(59, 'a') + "\xC3\xA9" + std::string(100, 'b');
  CHECK(bounded(text) == std::string(59, 'a') + "... (160 characters)");
}

TEST_CASE("throw_bad_value bounds the value it echoes") {
  const std::string big(100000, '9');
  CHECK_THROWS_WITH_AS(throw_bad_value("ropekit kernel", "--rho", "'" + big + "'", "a number"),
                       ("ropekit kernel: --rho = '" + std::string(60, '9') + "...' (100000 characters) (must be a number)")
                           .c_str(),
                       InputError);
}
