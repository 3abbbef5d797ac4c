// Refusals as a user reads them (issue 20 item 15): one line "error: ropekit <command>: <name> = <value> (must be
// <constraint>)" that names the command, never a C++ function, echoes a huge value in a few dozen characters, and
// has no line of Ceres' logging beside it.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/support.hpp"

using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;

namespace {

// The promised shape, after "error: " and the command's name.
const std::regex kShape(R"(^error: ropekit [a-z -]+: (.*: )?[^ ].* = .+ \(must be .+\)\n$)");

// "ropekit verify master" for "verify master --spectrum ...": the command's words (only verify, lie and jordan have
// a second).
std::string command_of(const std::string& args) {
  const std::size_t first = args.find(' ');
  const std::string word = args.substr(0, first);
  if (word != "verify" && word != "lie" && word != "jordan") return "ropekit " + word;
  return "ropekit " + args.substr(0, args.find(' ', first + 1));
}

void check_refusal(const std::string& args, const std::string& command) {
  const auto r = run_ropekit(args);
  CAPTURE(args);
  CAPTURE(r.err.substr(0, 400));
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("error: " + command + ": ", 0) == 0);
  CHECK(r.err.find("::") == std::string::npos);
  CHECK(std::regex_match(r.err, kShape));
}

}  // namespace

TEST_CASE("refusals name the command, no C++ function, in the shape <name> = <value> (must be ...)") {
  // Before: the spectrum's and the target's checks, the config reader and the probe table printed no command,
  // the density table named ropekit::magnitude_distribution, and the unknown names read "unknown X 'x' (known: ...)".
  const std::vector<std::string> cases = {
      "kernel --spectrum gaussian:sigma=0 --lags 1",
      "kernel --spectrum nosuch --lags 1",
      "kernel --spectrum matern:nu=-1 --lags 1",
      "kernel --encoding nosuch --lags 1",
      "kernel --encoding rope:dim=8,foo=1 --lags 1",
      "kernel --encoding rope:dim=7 --lags 1",
      "frequencies --encoding 'direct-sum:[rope(dim=8),nosuch]'",
      "features --encoding 'rope:[1,2]' --lags 1",
      "verify master --spectrum gaussian:sigma=0 --blocks 4 --trials 100 --lags 1",
      "verify master --spectrum gaussian --blocks 4 --trials 100 --lags 1 --sampling x",
      "design --kernel gaussian:sigma=0 --blocks 4",
      "fit --encoding rope --target nosuch --train-context 64 --eval-contexts 128",
      "fit --methods nosuch --target phase --train-context 64 --eval-contexts 128",
      "fit-params --encoding rope:dim=8 --free theta --target nosuch",
      "probe nosuch",
      // Before: "(... (ropekit::frequencies: scaling dynamic needs the current sequence length ...))".
      "design --kernel 'kernel:rope:dim=32,scaling=dynamic(factor=4,orig=64)' --blocks 4 --spectrum-route lines",
  };
  for (const auto& args : cases) check_refusal(args, command_of(args));
}

TEST_CASE("a value of 100,000 characters is echoed in a short line") {
  // Before: each of these printed the whole value (100 kB; a file's 10 MB cell gave a 10 MB line).
  const std::string big(100000, '1');
  const std::vector<std::string> cases = {
      "kernel --encoding rope:dim=8,base=" + big + " --lags 1",
      "kernel --encoding rope:dim=8 --lags " + big,
      "kernel --encoding rope:dim=x" + big + " --lags 1",
      "kernel --encoding x" + big + " --lags 1",
      "kernel --encoding rope:dim=8 --lags 1 --rho x" + big,
      "kernel --spectrum x" + big + " --lags 1",
      "kernel --encoding rope:dim=8 --lags 1 " + big,
      "fit --encoding rope --target phase --train-context 64 --eval-contexts 128,," + big,
  };
  for (const auto& args : cases) {
    const auto r = run_ropekit(args);
    CAPTURE(r.err.substr(0, 400));
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("error: ropekit ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.size() < 600);
    CHECK(r.err.find(" characters)") != std::string::npos);
  }
}

TEST_CASE("a 10 MB number in a file is echoed in a short line") {
  ScratchDir dir("messages");
  const std::string big(10485760, '1');
  const std::string table = dir.write("k.csv", "lag,value\n0,1\n1," + big + "x\n");
  const std::string freqs = dir.write("f.txt", "1\n" + big + "x\n");
  const std::string generators = dir.write("g.json", "{\"dimension\": 2, \"generators\": [[[0, " + big + "x], [1, 0]]]}");
  for (const std::string& args : {"fit-params --spectrum gaussian:sigma=? --kernel-data " + table,
                                  "kernel --spectrum file:" + freqs + " --lags 1", "lie check " + generators}) {
    const auto r = run_ropekit(args);
    CAPTURE(r.err.substr(0, 400));
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.size() < 600);
    CHECK(r.err.find(" characters)") != std::string::npos);
  }
}

TEST_CASE("Ceres' glog lines do not reach stderr") {
  // Before: "WARNING: Logging before InitGoogleLogging() is written to STDERR" and "E... trust_region_minimizer.cc:95]
  // Terminating: Number of consecutive invalid steps ..." came before ropekit's line (the residuals overflow; data
  // of 1e308 is now refused before any fit, so the overflow comes from a start at sigma = 1e-300).
  ScratchDir dir("glog");
  const std::string table = dir.write("k.csv", "lag,value\n0,1\n1,0.5\n2,0.2\n3,0.1\n");
  const auto r = run_ropekit("fit-params --kernel-data " + table + " --spectrum 'gaussian:sigma=?1e-300'");
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("error: ropekit fit-params: --spectrum = 'gaussian:sigma=?1e-300' (must be finite residuals", 0) == 0);
}

TEST_CASE("`ropekit list` alone prints what can be listed and exits 0; each item it names lists") {
  // Before: "ropekit list" was an error (what is required).
  const auto r = run_ropekit("list --format csv");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // The six lists the command's help names, in its order, each a row of the overview.
  const std::vector<std::string> expected = {"methods", "targets", "probes", "encodings", "schemes", "pipelines"};
  std::vector<std::string> names;
  std::size_t at = r.out.find('\n') + 1;  // past the header
  while (at < r.out.size()) {
    const std::size_t end = r.out.find('\n', at);
    names.push_back(r.out.substr(at, r.out.find(',', at) - at));
    at = end + 1;
  }
  CHECK(names == expected);
  for (const auto& n : names) CHECK(run_ropekit("list " + n).exit_code == 0);
  check_refusal("list widgets", "ropekit list");
  CHECK(run_ropekit("list widgets").err.find("must be methods, targets, probes, encodings, schemes or pipelines") !=
        std::string::npos);
}

TEST_CASE("a file-size limit (ulimit -f) gives the 'File too large' error, exit 2, no partial file") {
  // Before: SIGXFSZ killed the process (bash printed "File size limit exceeded", exit 153) and the run's
  // temporary file was left to the signal handler. 1 block of 1024 bytes: the 10001 rows need about 250 kB.
  ScratchDir dir("fsize-msg");
  const std::string out = dir.file("k.csv");
  for (const std::string& to : {"--out '" + out + "'", std::string("> '") + out + "'"}) {
    CAPTURE(to);
    const std::string cmd = "bash -c \"ulimit -f 1; exec '" + std::string(ROPEKIT_CLI) +
                            "' kernel --encoding rope:dim=8 --lags 0:10000 " + to + "\" 2>'" + dir.file("err") + "'";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    const std::string err = ropekit::test::slurp(dir.file("err"));
    CHECK(err.find("File too large") != std::string::npos);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    if (to[0] == '-') CHECK_FALSE(std::filesystem::exists(out));  // --out: nothing, not a partial file
    std::filesystem::remove(out);
  }
}
