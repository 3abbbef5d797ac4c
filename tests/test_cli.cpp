// The command line as a user meets it: exit codes, messages, no partial output files.
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;
using ropekit::test::source_path;

TEST_CASE("ropekit --version and --help exit 0") {
  CHECK(run_ropekit("--version").exit_code == 0);
  CHECK(run_ropekit("--help").exit_code == 0);
  CHECK(run_ropekit("fit --help").exit_code == 0);
}

TEST_CASE("an unknown subcommand or option is exit 2 with error:") {
  auto r = run_ropekit("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  r = run_ropekit("fit --config x.yaml --bogus");
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
}
