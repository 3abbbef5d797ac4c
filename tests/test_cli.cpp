// The command line as a user meets it: exit codes, messages, no partial output files.
#include <doctest/doctest.h>

#include <algorithm>
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

#include <cmath>

#include "probes/paper_cells.hpp"
#include "reports/table.hpp"

namespace {

// Each bad input: exit 2, one "error: ..." line naming the value, and no output file.
void check_rejected(const std::string& args, const std::string& expect) {
  ScratchDir dir("bad");
  const std::string out = dir.file("out.csv");
  const auto r = run_ropekit(args + " --out '" + out + "'");
  CAPTURE(args);
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find(expect) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(!std::filesystem::exists(out));
  CHECK(std::filesystem::is_empty(dir.path()));  // no temporary left behind either
}

std::string toy_with(const std::string& from, const std::string& to) {
  std::string text = ropekit::test::slurp(source_path("configs/paper-table3-toy.yaml"));
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

}  // namespace

TEST_CASE("ropekit fit --config paper-table3-toy.yaml --format csv agrees with the float64 answers") {
  const auto r = run_ropekit("fit --config '" + source_path("configs/paper-table3-toy.yaml") +
                             "' --methods rope damped_rope rope_alibi alibi direct_sum jordan_rope jordan_raw_tau "
                             "jordan_exact_c010 jordan_exact_scaled --format csv");
  REQUIRE(r.exit_code == 0);
  const auto rows = ropekit::read_fit_rows(ropekit::parse_csv(r.out, "stdout"), "stdout");
  int checked = 0;
  for (const auto& cell : ropekit::paper_cells()) {
    if (cell.table != 3) continue;
    const double v = ropekit::metric_value(rows, cell.method, cell.target, cell.metric);
    CAPTURE(cell.row);
    CAPTURE(cell.column);
    // Acceptance bound of the issue: 1e-5 relative, 1e-9 absolute floor.
    CHECK(std::fabs(v - cell.oracle_f64) <= std::max(1e-5 * std::fabs(cell.oracle_f64), 1e-9));
    ++checked;
  }
  CHECK(checked == 27);
  CHECK(r.out.rfind("seed,target,method,context,split,n_features,", 0) == 0);
}

TEST_CASE("bad input on the command line: error: - exit 2 - no output file") {
  ScratchDir cfg("cfg");
  const std::string toy = source_path("configs/paper-table3-toy.yaml");
  check_rejected("fit --config '" + toy + "' --methods wavelets", "unknown method 'wavelets'");
  check_rejected("fit --config '" + toy + "' --methods jordan_exact_m4_c010", "jordan_scaled_m4_c010");
  check_rejected("fit --config '" + toy + "' --targets spiral", "unknown target 'spiral'");
  check_rejected("fit --config '" + toy + "' --format xml", "format = 'xml'");
  check_rejected("fit --config /nonexistent.yaml", "/nonexistent.yaml");
  // The paper's Table 3 config with one value broken.
  struct Broken {
    const char *from, *to, *expect;
  };
  for (const auto& b : {Broken{"head_dim: 64", "head_dim: 63", "head_dim = 63"},
                        Broken{"head_dim: 64", "head_dim: 0", "head_dim = 0"},
                        Broken{"num_freqs: 16", "num_freqs: 0", "num_freqs = 0"},
                        Broken{"train_context: 1024\n  eval", "train_context: -1024\n  eval", "train_context = -1024"},
                        Broken{"[1024, 2048, 4096, 8192]", "[1024, 0]", "eval_contexts[1] = 0"},
                        Broken{"ridge: 0.0001", "ridge: -1", "ridge = -1"},
                        Broken{"gamma: 0.0001", "gamma: .nan", "gamma = nan"},
                        Broken{"theta: 10000.0", "theta: nan", "theta = nan"}})
    check_rejected("fit --config '" + cfg.write("broken.yaml", toy_with(b.from, b.to)) + "'", b.expect);
  check_rejected("fit --config '" + cfg.write("bad.yaml", "toy: [1, 2\n") + "'", "malformed YAML");
  check_rejected("fit --config '" + cfg.write("none.yaml", "seeds: [0]\nmethods: [rope]\n") + "'",
                 "neither a 'toy' nor a 'benchmarks' section");
  check_rejected("features --method jordan:m=0 --lags 0:4", "m = 0");
  check_rejected("features --method rope --lags 0,-1", "lag[1] = -1");
  check_rejected("features --method rope --lags 0,nan", "--lags = 'nan'");
  check_rejected("features --method rope --head-dim 7", "head_dim = 7");
}

TEST_CASE("ropekit features prints the columns in the spec's order") {
  const auto r = run_ropekit("features --method alibi --lags 0,512,1024 --train-context 1024");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "lag,1,x\n0,1,0\n512,1,0.5\n1024,1,1\n");
}

TEST_CASE("ropekit list and probe --list exit 0 and name what exists") {
  auto r = run_ropekit("list methods");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("jordan-scaled:m=<m>,c=<c>") != std::string::npos);
  r = run_ropekit("list targets --format csv");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("scaled_high_jet_r<r>") != std::string::npos);
  r = run_ropekit("probe --list");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("jordan-table3") != std::string::npos);
  CHECK(run_ropekit("probe no-such-probe").exit_code == 2);
  CHECK(run_ropekit("list widgets").exit_code == 2);
}

TEST_CASE("ropekit probe writes the report and its rows - a report starts with version and command") {
  ScratchDir dir("probe");
  const auto r = run_ropekit("probe jordan-table3 --out-dir '" + dir.path().string() + "'");
  REQUIRE(r.exit_code == 0);
  const std::string md = ropekit::test::slurp(dir.file("jordan-table3.md"));
  CHECK(md.find("- ropekit ") != std::string::npos);
  CHECK(md.find("- command: `ropekit probe jordan-table3 --out-dir") != std::string::npos);
  CHECK(md.find("| Exact/raw Jordan | `jordan_raw_tau` |") != std::string::npos);
  CHECK(md.find("462.392 †") != std::string::npos);  // a float32 artefact is marked
  CHECK(std::filesystem::exists(dir.file("jordan-table3.csv")));
  CHECK(r.out.find(dir.file("jordan-table3.md")) != std::string::npos);
}

TEST_CASE("a probe re-renders the reference's own CSV rows with --rows") {
  ScratchDir dir("rows");
  // A float32-style run of the reference, one row per printed Table 3 cell (toy CSV: task column, no r2).
  std::string csv = "seed,task,method,context,split,mse\n";
  for (const auto& cell : ropekit::paper_cells())
    if (cell.table == 3) csv += "0," + cell.target + "," + cell.method + ",8192,eval," + cell.paper + "\n";
  for (const char* m : {"nope", "real_jordan", "jordan_no_gamma", "jordan_m3"})
    for (const char* t : {"phase", "linear", "mixed"}) csv += std::string("0,") + t + "," + m + ",8192,eval,1\n";
  const std::string rows = dir.write("toy_metrics.csv", csv);
  const auto r = run_ropekit("probe jordan-table3 --rows '" + rows + "' --out-dir '" + dir.path().string() + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string md = ropekit::test::slurp(dir.file("jordan-table3.md"));
  CHECK(md.find("read from") != std::string::npos);
  CHECK(md.find("| Exact/raw Jordan | `jordan_raw_tau` | — | — | 0.004 | 0.004 | 462.4 |") != std::string::npos);
}
