#pragma once
// Sharded runs for job arrays (Slurm, GNU parallel): `--shard i/n` computes shard i (counted from 0) of n of a
// command's table rows, and merge_shards joins the n shard files into exactly the unsharded file, byte for byte.
// A shard file is the table in its format (the shard's rows only) after one header line, a comment where the
// format has comments (JSON has none: strip the first line to read a shard on its own):
//   csv, json: `# ropekit-shard {...}`   md: `<!-- ropekit-shard {...} -->`   latex: `% ropekit-shard {...}`
// The header (one JSON object) names the shard, the run (its command line without --shard, --out and
// --threads, the digests of the files it read, the version), the format, the run's row count and the
// positions of the shard's rows in the unsharded table, so that a merge checks completeness and order without
// recomputing anything. An unsharded run's output is unchanged: the header exists only with --shard.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reports/table.hpp"

namespace ropekit {

/// Shard `index` of `count`, 0 <= index < count (index counted from 0, as Slurm's --array=0-N).
struct Shard {
  std::int64_t index = 0;
  std::int64_t count = 1;
};

/// The most shards a run may be cut into.
inline constexpr std::int64_t kMaxShards = 1 << 20;

/// Reads "i/n". @throws InputError "<command>: --shard = '<text>' (must be ...)" naming the broken constraint.
Shard parse_shard(std::string_view text, const std::string& command);

/// Shard s's contiguous part [first, last) of `items` equally costly items (sizes differ by at most one).
std::pair<std::size_t, std::size_t> shard_range(std::size_t items, Shard s);

/// Items of estimated costs dealt to the shards, the most costly first, each to the least loaded shard (longest
/// processing time first; ties to the lower shard, so the deal is deterministic). @returns shard s's items, increasing.
std::vector<std::size_t> shard_items(const std::vector<double>& costs, Shard s);

/// What a shard file says about itself.
struct ShardHeader {
  Shard shard;
  Format format = Format::csv;
  std::string run;                ///< the command line without --shard, --out and --threads
  std::string inputs;             ///< the files the run read, as "<what>:<fnv1a64 hex>" ...
  std::string version;            ///< ropekit's
  std::size_t total_rows = 0;     ///< rows of the unsharded table
  std::vector<std::size_t> rows;  ///< positions of this shard's rows in the unsharded table, increasing
  std::string digest;             ///< fnv1a64 (hex) of the table text below the header, as read (written by shard_file)
};

/// The header of a shard: `run` and `version` as given, the inputs this process read (input_files_read).
ShardHeader shard_header(Shard shard, Format format, std::string run, std::string version, std::size_t total_rows,
                         std::vector<std::size_t> rows);

/// The shard file: the header line, then render(table, format). table.rows.size() must equal header.rows.size().
std::string shard_file(const ShardHeader& header, const Table& table);

/// A shard file's name (for messages) and content.
struct ShardText {
  std::string name;
  std::string text;
};

/// Joins shard files (any order) into the unsharded run's output. @throws InputError "ropekit merge: ..." for a
/// file that is not a shard or whose header is damaged, shards of different runs, formats or shard counts, a
/// shard given twice or missing, or a shard whose table does not hold the rows its header lists (truncated).
std::string merge_shards(const std::vector<ShardText>& files);

}  // namespace ropekit
