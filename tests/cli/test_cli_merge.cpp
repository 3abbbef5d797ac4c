// `--shard i/n` on fit and verify, and `ropekit merge` (issue 10): the merged shards are byte for byte the file
// the unsharded run writes, for n = 1, 2, 3 (and more shards than rows) and every format; a shard's rows are the
// unsharded run's (the Monte Carlo draws the same numbers for them); bad shards and bad merges are refused with
// one line, exit 2 and no output file.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "reports/table.hpp"
#include "tests/support.hpp"

using ropekit::test::check_rejected;
using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;
using ropekit::test::slurp;
using ropekit::test::source_path;

namespace {

const char* const kFormats[] = {"csv", "md", "json", "latex"};

// The unsharded file of `args` and the merge of its n shards (written in reverse order, merged in shard order).
struct Runs {
  std::string unsharded, merged;
  std::vector<std::string> shards;
};

Runs run_sharded(const ScratchDir& dir, const std::string& args, int n) {
  Runs r;
  const auto full = run_ropekit(args);
  REQUIRE_MESSAGE(full.exit_code == 0, full.err);
  r.unsharded = full.out;
  std::string files;
  for (int i = n - 1; i >= 0; --i) {
    const std::string f = dir.file("s" + std::to_string(i));
    const auto s = run_ropekit(args + " --shard " + std::to_string(i) + "/" + std::to_string(n) + " --out " + f);
    REQUIRE_MESSAGE(s.exit_code == 0, s.err);
    CHECK(s.out.empty());
    r.shards.insert(r.shards.begin(), slurp(f));
  }
  for (int i = 0; i < n; ++i) files += " " + dir.file("s" + std::to_string(i));
  const auto m = run_ropekit("merge" + files + " --out " + dir.file("merged"));
  REQUIRE_MESSAGE(m.exit_code == 0, m.err);
  CHECK(m.out.empty());
  r.merged = slurp(dir.file("merged"));
  return r;
}

// Every format and n = 1, 2, 3 (and `more` shards, some then empty): merged == unsharded, byte for byte.
void check_merges(const std::string& args, std::initializer_list<int> counts = {1, 2, 3}) {
  for (const char* format : kFormats)
    for (int n : counts) {
      ScratchDir dir("merge");
      CAPTURE(args);
      CAPTURE(format);
      CAPTURE(n);
      const Runs r = run_sharded(dir, args + " --format " + format, n);
      CHECK(r.unsharded.rfind("ropekit-shard") == std::string::npos);  // the unsharded format is unchanged
      CHECK(r.merged == r.unsharded);
      for (const auto& s : r.shards) {
        CHECK(s.substr(0, s.find('\n')).find(" ropekit-shard {\"shard\":") != std::string::npos);  // the first line
      }
    }
}

const std::string kTable3 = "fit --config " + source_path("configs/paper-table3-toy.yaml");
// A small run from options: 3 encodings of different sizes, 2 targets, 2 seeds, 2 scored lengths.
const std::string kSmallFit = "fit --encoding rope:dim=16 jordan_m3 'direct-sum:[rope,alibi]' --target mixed phase "
                              "--train-context 256 --eval-contexts 512,1024 --seed 0,1";
// Lags that are no even grid, but whose shards' lags are (3 .. 40): each shard must still score lags one by one.
std::string lags_1_0_2_to(int last) {
  std::string s = "1,0";
  for (int i = 2; i <= last; ++i) s += "," + std::to_string(i);
  return s;
}

}  // namespace

TEST_CASE("fit --shard: merged shards equal the unsharded file for the paper's Table 3 config, every format") {
  check_merges(kTable3);
}

TEST_CASE("fit --shard: merged shards equal the unsharded file for a small run from options, 4 shards of 3 bases") {
  check_merges(kSmallFit, {1, 2, 3, 4});
  // With 4 shards of 3 bases one shard holds no rows: its table is the header only.
  ScratchDir dir("merge-empty");
  const Runs r = run_sharded(dir, kSmallFit, 4);
  std::size_t empty = 0;
  for (const auto& s : r.shards) empty += s.substr(s.find('\n') + 1) == r.unsharded.substr(0, r.unsharded.find('\n') + 1);
  CHECK(empty == 1);
}

TEST_CASE("fit --shard: a shard's rows are the unsharded rows, and the shards share the work") {
  ScratchDir dir("merge-rows");
  const Runs r = run_sharded(dir, kTable3, 3);
  const auto full = ropekit::parse_csv(r.unsharded, "unsharded");
  std::size_t total = 0;
  for (const auto& s : r.shards) {
    const auto part = ropekit::parse_csv(s.substr(s.find('\n') + 1), "shard");
    CHECK(part.columns == full.columns);
    for (const auto& row : part.rows)
      CHECK(std::find(full.rows.begin(), full.rows.end(), row) != full.rows.end());
    // 11 bases of 5 targets x 9 rows, dealt by cost: no shard holds more than half the rows.
    CHECK(part.rows.size() * 2 < full.rows.size());
    total += part.rows.size();
  }
  CHECK(total == full.rows.size());
}

TEST_CASE("verify master --shard: merged shards equal the unsharded file (same Monte Carlo draws per lag)") {
  check_merges("verify master --spectrum cauchy:b=2 --trials 600 --blocks 8 --lags 0,0.5,1,2,4,7,9.5 --seed 11");
  // k-D lags: the lag cell is quoted text in CSV.
  check_merges("verify master --spectrum gaussian:sigma=1,dims=2 --trials 600 --blocks 8", {3});
}

TEST_CASE("verify --shard: shards whose own lags form an even grid still give the unsharded rows") {
  // Lags 1,0,2..40 are scored one by one; a shard's lags (e.g. 14..27) would be an even grid, which the Monte
  // Carlo scores by a recurrence whose last digits differ: the shard must score them one by one too.
  check_merges("verify master --spectrum gaussian:sigma=1 --trials 600 --blocks 8 --lags " + lags_1_0_2_to(40), {2, 3});
  check_merges("verify variance --spectrum gaussian:sigma=1 --trials 600 --blocks 8 --lags " + lags_1_0_2_to(20), {3});
  check_merges("verify sampling --spectrum gaussian:sigma=1 --trials 600 --blocks 8 --lags " + lags_1_0_2_to(20), {3});
  check_merges("verify content --encoding rope:dim=16 --trials 600 --alpha 0.01 --lags 0,1,2,3,10,100", {2, 5});
}

TEST_CASE("verify --shard: a failing shard still writes its rows and exits 3, and the merge is the failing run's file") {
  const std::string args = "verify master --spectrum cauchy:b=4 --power --trials 2000 --blocks 8 --lags 0,1,2,4";
  ScratchDir dir("merge-fail");
  const auto full = run_ropekit(args);
  REQUIRE(full.exit_code == 3);
  std::string files;
  for (int i = 0; i < 2; ++i) {
    const std::string f = dir.file("s" + std::to_string(i));
    const auto s = run_ropekit(args + " --shard " + std::to_string(i) + "/2 --out " + f);
    CHECK((s.exit_code == 0 || s.exit_code == 3));
    CHECK(s.err.find("(shard " + std::to_string(i) + "/2: 2 of 4 lags)") != std::string::npos);
    files += " " + f;
  }
  const auto m = run_ropekit("merge" + files);
  REQUIRE(m.exit_code == 0);
  CHECK(m.out == full.out);
}

TEST_CASE("--shard refuses values that are not i/n with 0 <= i < n") {
  for (const std::string& cmd :
       {kTable3, std::string("verify master --spectrum gaussian:sigma=1 --trials 100"),
        std::string("verify content --encoding rope:dim=8 --trials 100")}) {
    const std::string where = "error: ropekit " + cmd.substr(0, cmd.find(" --")) + ": --shard = ";
    check_rejected(cmd + " --shard 3/2", where + "'3/2' (must be i/n with i < n: shards are counted from 0, so 2 shards "
                                                 "are 0/2 to 1/2)");
    check_rejected(cmd + " --shard 0/0", where + "'0/0' (must be i/n with n in [1, 1048576])");
    check_rejected(cmd + " --shard x", where + "'x' (must be i/n: shard i of n, i counted from 0");
    check_rejected(cmd + " --shard 1/2/3", where + "'1/2/3' (must be i/n");
    check_rejected(cmd + " --shard -1/2", where + "'-1/2' (must be i/n");
  }
  check_rejected("verify convergence --spectrum gaussian:sigma=1 --trials 100 --shard 0/2",
                 "ropekit verify convergence: --shard = '0/2' (must be absent: every row carries the log-log slope");
  check_rejected("verify master --spectrum gaussian:sigma=1 --trials 100 --lags 0:16 --shard 1/2",
                 "--shard = '1/2' (must be absent (or 0/1) for --lags an evenly spaced grid of 16 1-D lags");
  // Decimal lags on a grid up to rounding take the same recurrence (lags/near_grid), so they are refused too.
  check_rejected("verify master --spectrum gaussian:sigma=1 --trials 100 --lags 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9 "
                 "--shard 1/2",
                 "--shard = '1/2' (must be absent (or 0/1) for --lags an evenly spaced grid of 9 1-D lags");
}

TEST_CASE("merge refuses shards of different runs, missing, duplicate or truncated shards, and non-shards") {
  ScratchDir dir("merge-bad");
  // A config copy that differs only in a comment: the same command line, other input bytes.
  const std::string config = dir.write("c.yaml", slurp(source_path("configs/paper-table3-toy.yaml")));
  const std::string edited = dir.write("e.yaml", slurp(config) + "# edited\n");
  auto shard = [&](const std::string& args, const std::string& s, const std::string& name) {
    const std::string f = dir.file(name);
    const auto r = run_ropekit(args + " --shard " + s + " --out " + f);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return f;
  };
  const std::string fit = "fit --config " + config + " --targets phase mixed";
  const std::string s0 = shard(fit, "0/3", "s0.csv"), s1 = shard(fit, "1/3", "s1.csv"), s2 = shard(fit, "2/3", "s2.csv");
  REQUIRE(run_ropekit("merge " + s0 + " " + s1 + " " + s2).exit_code == 0);

  check_rejected("merge " + s0 + " " + s2, "ropekit merge: shards = 0/3, 2/3 (must be all 3 shards of the run: missing 1/3)");
  check_rejected("merge " + s0 + " " + s1 + " " + s1 + " " + s2, "' = shard 1/3 (must be given once: '");
  const std::string other = shard(fit + " --targets linear", "1/3", "other.csv");
  check_rejected("merge " + s0 + " " + other + " " + s2, "other.csv' = a shard with command '");
  const std::string md = shard(fit + " --format md", "1/3", "s1.md");
  check_rejected("merge " + s0 + " " + md + " " + s2, "s1.md' = a shard with format md (must be a shard of the same run as '");
  const std::string four = shard(fit, "1/4", "four.csv");
  check_rejected("merge " + s0 + " " + four + " " + s2, "four.csv' = a shard with shard count 4 (must be");
  // Same command, config edited between the shards: its digest differs.
  std::filesystem::copy_file(edited, config, std::filesystem::copy_options::overwrite_existing);
  const std::string late = shard(fit, "1/3", "late.csv");
  check_rejected("merge " + s0 + " " + late + " " + s2, "late.csv' = a shard with input files 'config:");
  const std::string verify = shard("verify master --spectrum gaussian:sigma=1 --trials 100", "1/3", "v1.csv");
  check_rejected("merge " + s0 + " " + verify + " " + s2, "v1.csv' = a shard with command 'ropekit verify master");

  // Truncated: mid-line, at a line end, inside the header line; and a file that is no shard.
  const std::string text = slurp(s1);
  const std::string cut_mid = dir.write("cut_mid.csv", text.substr(0, text.size() - 7));
  check_rejected("merge " + s0 + " " + cut_mid + " " + s2,
                 "cut_mid.csv' = a table whose last line is cut (must be a complete csv table after the shard header");
  std::size_t line_end = text.size() - 1;
  for (int k = 0; k < 3; ++k) line_end = text.rfind('\n', line_end - 1);
  const std::string cut_line = dir.write("cut_line.csv", text.substr(0, line_end + 1));
  check_rejected("merge " + s0 + " " + cut_line + " " + s2, "cut_line.csv' = ");
  check_rejected("merge " + s0 + " " + cut_line + " " + s2, " rows (must be ");
  const std::string cut_header = dir.write("cut_header.csv", text.substr(0, 40));
  check_rejected("merge " + s0 + " " + cut_header + " " + s2, "cut_header.csv' = a shard header cut short");
  const std::string plain = dir.write("plain.csv", text.substr(text.find('\n') + 1));
  check_rejected("merge " + s0 + " " + plain + " " + s2, "plain.csv' = a file without a shard header (must be a shard");
  // The same for the formats whose rows are blocks or lines between a head and a tail.
  for (const char* format : {"json", "latex", "md"}) {
    CAPTURE(format);
    const std::string f = shard(fit.substr(0, fit.find(" --targets")) + " --targets phase mixed --format " + format,
                                "0/1", std::string("one.") + format);
    REQUIRE(run_ropekit("merge " + f).exit_code == 0);
    const std::string t = slurp(f);
    const std::string cut = dir.write(std::string("cut.") + format, t.substr(0, t.rfind('\n', t.size() - 2) + 1));
    check_rejected("merge " + cut, std::string("cut.") + format + "' = ");
  }
  check_rejected("merge " + s0 + " " + s1 + " " + s2 + " " + dir.file("missing.csv"), "missing.csv");
}

TEST_CASE("merge refuses edited, reordered or hostile shards before allocating what their headers claim") {
  ScratchDir dir("merge-hostile");
  const std::string fit = kSmallFit;
  std::vector<std::string> shards;
  for (int i = 0; i < 2; ++i) {
    shards.push_back(dir.file("s" + std::to_string(i) + ".csv"));
    REQUIRE(run_ropekit(fit + " --shard " + std::to_string(i) + "/2 --out " + shards.back()).exit_code == 0);
  }
  const std::string text = slurp(shards[1]);
  const auto eol = text.find('\n');
  const std::string header = text.substr(0, eol + 1), body = text.substr(eol + 1);
  // One digit of one value edited; two rows swapped (the row count and the layout still hold).
  std::string edited = body;
  const auto comma = edited.rfind(',');
  edited[comma - 1] = edited[comma - 1] == '1' ? '2' : '1';
  check_rejected("merge " + shards[0] + " " + dir.write("edited.csv", header + edited),
                 "edited.csv' = a shard whose table differs from the one it was written with (must be the table as --shard "
                 "wrote it (its header's digest no longer matches: rows edited or moved))");
  const auto l1 = body.find('\n'), l2 = body.find('\n', l1 + 1), l3 = body.find('\n', l2 + 1);
  const std::string swapped = body.substr(0, l1 + 1) + body.substr(l2 + 1, l3 - l2) + body.substr(l1 + 1, l2 - l1) + body.substr(l3 + 1);
  REQUIRE(swapped.size() == body.size());
  REQUIRE(swapped != body);
  check_rejected("merge " + shards[0] + " " + dir.write("swapped.csv", header + swapped), "swapped.csv' = a shard whose table differs");
  // Header counts that are negative, beyond 2^63, or claim more rows than the file holds: a damaged header, at once.
  auto with = [&](const std::string& key, const std::string& value) {
    const auto at = header.find("\"" + key + "\":") + key.size() + 3;
    const auto end = header.find_first_of(",}", at);
    return header.substr(0, at) + value + header.substr(end) + body;
  };
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"total_rows", "-1"}, {"total_rows", "9223372036854775808"}, {"total_rows", "1e300"}, {"rows", "-1"},
           {"rows", "4000000000"}, {"positions", "\"0-4000000000\""}}) {
    CAPTURE(key);
    CAPTURE(value);
    // (a count past 2^63 that fits the file's other checks is refused as a row count other than the run's)
    check_rejected("merge " + shards[0] + " " + dir.write("hostile.csv", with(key, value)), "hostile.csv' = a ");
  }
}

TEST_CASE("merge of more than 64 shards still never writes over one of them") {
  ScratchDir dir("merge-many");
  const int n = 70;
  std::string lags;  // 70 lags, not an even grid (a grid's rows depend on its shard's range)
  for (int i = 1; i <= n; ++i) lags += (i > 1 ? "," : "") + std::to_string(i * i);
  std::string files;
  for (int i = 0; i < n; ++i) {
    const std::string f = dir.file("s" + std::to_string(i) + ".csv");
    REQUIRE(run_ropekit("verify master --spectrum gaussian:sigma=1 --trials 100 --lags " + lags + " --shard " + std::to_string(i) +
                        "/" + std::to_string(n) + " --out " + f)
                .exit_code == 0);
    files += " " + f;
  }
  REQUIRE(run_ropekit("merge" + files).exit_code == 0);
  // The first shard read is the one a 64-entry registry forgot.
  const std::string first = dir.file("s0.csv"), before = slurp(first);
  const auto r = run_ropekit("merge" + files + " --out " + first);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("it is the shard file this run read") != std::string::npos);
  CHECK(slurp(first) == before);
}

TEST_CASE("merge never writes over a shard it reads") {
  ScratchDir dir("merge-self");
  const std::string f = dir.file("s0.csv");
  REQUIRE(run_ropekit(kSmallFit + " --shard 0/1 --out " + f).exit_code == 0);
  const std::string before = slurp(f);
  const auto r = run_ropekit("merge " + f + " --out " + f);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("it is the shard file this run read") != std::string::npos);
  CHECK(slurp(f) == before);
}
