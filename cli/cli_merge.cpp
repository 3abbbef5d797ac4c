// ropekit merge: joins the shard files of a `--shard i/n` run of fit or verify into exactly the file the
// unsharded run writes (reports/shard.hpp says what a shard file holds and what is checked).
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "reports/output.hpp"
#include "reports/shard.hpp"
#include "ropekit/core/input_file.hpp"

namespace ropekit {

namespace {

struct MergeArgs {
  std::vector<std::string> files;
  std::string out;
};

// Reads every shard (read_file: an input is never the output), merges, and only then writes.
void run_merge(const MergeArgs& a) {
  check_output_path(a.out);
  std::vector<ShardText> shards;
  for (const auto& f : a.files) shards.push_back({f, read_file(f, "shard file")});
  const std::string merged = merge_shards(shards);  // every check before anything is written
  emit(a.out, merged);
}

}  // namespace

void add_merge_command(CLI::App& app, const CliContext&) {
  auto a = std::make_shared<MergeArgs>();
  auto* m = app.add_subcommand("merge", "Join the shard files of a `fit` or `verify` run made with --shard i/n into "
                                        "exactly the unsharded output (every format)");
  m->add_option("files", a->files, "the n shard files, in any order")->required();
  m->add_option("--out", a->out, "output file (default: stdout); written only if every shard is there and whole");
  m->callback([a] { run_merge(*a); });
}

}  // namespace ropekit
