// reports/shard.hpp: parse_shard's constraints, shard_range and shard_items tile the items, the deal balances
// by cost (longest first), and any split of a table into shard files merges back to render(table) byte for byte
// in every format, whatever the cells (quotes, commas, newlines in CSV, non-ASCII, -0, huge and tiny reals).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "reports/shard.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "tests/support.hpp"

using namespace ropekit;

TEST_CASE("parse_shard reads i/n with 0 <= i < n and names the broken constraint") {
  const Shard s = parse_shard("2/5", "ropekit fit");
  CHECK(s.index == 2);
  CHECK(s.count == 5);
  CHECK(parse_shard("0/1", "c").count == 1);
  for (const char* bad : {"5/5", "3/2", "0/0", "x", "1", "/2", "1/", "-1/2", "+1/2", "1/2/3", " 1/2", "1.0/2", "1/2 "}) {
    CAPTURE(bad);
    try {
      parse_shard(bad, "ropekit fit");
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).rfind(std::string("ropekit fit: --shard = '") + bad + "' (must be i/n", 0) == 0);
    }
  }
}

TEST_CASE("shard_range and shard_items give every item to exactly one shard") {
  for (std::size_t items : {0, 1, 2, 7, 100})
    for (std::int64_t n : {1, 2, 3, 8}) {
      CAPTURE(items);
      CAPTURE(n);
      std::vector<int> seen(items, 0);
      std::size_t prev_last = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const auto [first, last] = shard_range(items, Shard{i, n});
        CHECK(first == prev_last);  // contiguous, in shard order
        CHECK(last - first <= items / static_cast<std::size_t>(n) + 1);
        CHECK(last - first >= items / static_cast<std::size_t>(n));
        prev_last = last;
        std::vector<double> costs(items);
        for (std::size_t k = 0; k < items; ++k) costs[k] = static_cast<double>((k * 7919) % 13);
        for (std::size_t k : shard_items(costs, Shard{i, n})) ++seen[k];
      }
      CHECK(prev_last == items);
      for (int c : seen) CHECK(c == 1);
    }
}

TEST_CASE("shard_items deals the most costly first to the least loaded shard") {
  // Costs 5, 4, 3, 3, 3 on 2 shards, loads after each deal: (5,0) (5,4) (5,7) (8,7) (8,10), worked by hand:
  // shard 0 = {0, 3}, shard 1 = {1, 2, 4}.
  const std::vector<double> costs = {5, 4, 3, 3, 3};
  CHECK(shard_items(costs, Shard{0, 2}) == std::vector<std::size_t>{0, 3});
  CHECK(shard_items(costs, Shard{1, 2}) == std::vector<std::size_t>{1, 2, 4});
  // One item per shard when there are as many shards as items; an extra shard is empty.
  CHECK(shard_items(costs, Shard{4, 6}).size() == 1);
  CHECK(shard_items(costs, Shard{5, 6}).empty());
}

TEST_CASE("any split of a table into shard files merges to the unsharded text, every format") {
  Table t;
  t.columns = {"name", "x", "n", "ok", "empty"};
  const std::vector<std::string> names = {"plain", "a,b", "say \"hi\"", "two\nlines", "γ ≥ ω", "pipe|bar", "", "x_%&$"};
  const double reals[] = {0.0, -0.0, 1e-300, -1.5e308, 0.1, 1.0, 3.0, std::numeric_limits<double>::denorm_min()};
  for (std::size_t i = 0; i < 24; ++i)
    t.add_row({names[i % names.size()], reals[i % 8] * (i % 3 == 2 ? -1 : 1), static_cast<std::int64_t>(i) - 7,
               i % 2 == 0, Cell()});
  Rng rng(test::test_seed(99), 1);
  for (Format f : {Format::csv, Format::md, Format::json, Format::latex})
    for (std::int64_t n : {1, 2, 3, 5, 30}) {
      CAPTURE(static_cast<int>(f));
      CAPTURE(n);
      // Random positions per shard (not contiguous): each row to a random shard.
      std::vector<std::vector<std::size_t>> pos(static_cast<std::size_t>(n));
      for (std::size_t r = 0; r < t.rows.size(); ++r) pos[rng.below(static_cast<std::uint64_t>(n))].push_back(r);
      std::vector<ShardText> files;
      for (std::int64_t i = n - 1; i >= 0; --i) {
        Table part;
        part.columns = t.columns;
        for (std::size_t r : pos[static_cast<std::size_t>(i)]) part.add_row(t.rows[r]);
        const ShardHeader h = shard_header(Shard{i, n}, f, "ropekit test", "0", t.rows.size(), pos[static_cast<std::size_t>(i)]);
        files.push_back({"s" + std::to_string(i), shard_file(h, part)});
      }
      // A raw newline in a cell breaks LaTeX's lines; Markdown writes it as a space (issue 32), so its shards merge.
      if (f == Format::latex) {
        CHECK_THROWS_AS(merge_shards(files), InputError);
        continue;
      }
      CHECK(merge_shards(files) == render(t, f));
    }
}

TEST_CASE("merge_shards: tables without a newline in a cell merge in Markdown and LaTeX too") {
  Table t;
  t.columns = {"name", "x"};
  for (int i = 0; i < 10; ++i) t.add_row({std::string(i % 2 ? "a|b" : "γ_1"), 1.0 / (i + 1)});
  for (Format f : {Format::md, Format::latex}) {
    std::vector<ShardText> files;
    for (std::int64_t i = 0; i < 3; ++i) {
      const auto [first, last] = shard_range(t.rows.size(), Shard{i, 3});
      Table part;
      part.columns = t.columns;
      std::vector<std::size_t> pos;
      for (std::size_t r = first; r < last; ++r) part.add_row(t.rows[r]), pos.push_back(r);
      files.push_back({"s", shard_file(shard_header(Shard{i, 3}, f, "run", "0", t.rows.size(), pos), part)});
    }
    CHECK(merge_shards(files) == render(t, f));
  }
}
