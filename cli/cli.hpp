#pragma once
// The `ropekit` command line. Each command group registers its subcommands on the app; the
// commands throw InputError for bad input, which run_cli turns into "error: ..." and exit code 2.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ropekit/models/model_layers.hpp"  // ModelLayer

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ropekit {

/// Thrown by a verification command after its complete output is written, when a check failed:
/// run_cli exits with code 3 (0: every check passed, 2: bad input, 1: internal failure).
struct ChecksFailed {};

struct CliContext {
  std::string command;  ///< the exact command line, shell-quoted, recorded in reports
  /// The command line without --shard, --out and --threads (and their values): what every shard of one run
  /// shares, recorded in shard headers (reports/shard.hpp) for `ropekit merge` to compare.
  std::string run;
};

/// fit, features, list, probe (the fixed-basis foundation).
void add_fixed_basis_commands(CLI::App& app, const CliContext& ctx);

/// kernel, verify master|variance|convergence|sampling (RF-RoPE, issue 3).
void add_rf_rope_commands(CLI::App& app, const CliContext& ctx);
/// lie build|check|kernel, jordan positionwise (N-D RoPE and position-wise Jordan-RoPE).
void add_lie_commands(CLI::App& app, const CliContext& ctx);
/// frequencies, check (encodings, issue 7; `kernel --encoding` and `features --encoding` are in cli_encoding.hpp).
void add_encoding_commands(CLI::App& app, const CliContext& ctx);
/// fit-params: tune an encoding's parameters, or fit a spectral family to kernel values (Ceres, issue 8).
void add_fit_params_commands(CLI::App& app, const CliContext& ctx);
/// merge: join the shard files of a `--shard i/n` run into the unsharded output (reports/shard.hpp).
void add_merge_command(CLI::App& app, const CliContext& ctx);
/// design (inverse design of RF-RoPE frequencies from a target kernel; RF-RoPE Corollary 3).
void add_design_commands(CLI::App& app, const CliContext& ctx);
/// ropekit model (cli_model.cpp).
void add_model_command(CLI::App& app, const CliContext& ctx);
/// ropekit frameworks FILE[:LAYER_TYPE] (cli_frameworks.cpp).
void add_frameworks_command(CLI::App& app, const CliContext& ctx);
/// ropekit precision (cli_precision.cpp).
void add_precision_command(CLI::App& app, const CliContext& ctx);
/// ropekit report FILE... (cli_report.cpp).
void add_report_command(CLI::App& app, const CliContext& ctx);
/// --model FILE[:LAYER_TYPE] beside a command's --encoding (cli_model.cpp).
CLI::Option* add_model_option(CLI::App* c, std::vector<std::string>& models, bool several);
/// The library's model_layers (models/model_layers.hpp) with messages naming the command's --model.
std::vector<ModelLayer> model_layers(const std::string& command, const std::vector<std::string>& models, bool several);
/// The spellings of the models' layer types (duplicates once), for commands that do not look at windows.
std::vector<std::string> model_encodings(const std::string& command, const std::vector<std::string>& models,
                                         bool several);
/// For a command that takes one encoding: the one --model names, into `encoding` (left as it is without --model);
/// returns that layer type (nullopt without --model).
/// @throws InputError naming --model when the models name several encodings.
std::optional<ModelLayer> take_model_encoding(const std::string& command, const std::vector<std::string>& models,
                                              std::string& encoding);

// Typed options read by ropekit's own parsers, so that every value error has the one message shape
// "<command>: <option> = <text> (must be ...)" and integers may be typed in scientific notation.

/// An integer option read exactly in decimal or scientific notation ("100000", "1e5", "2.5e3"); a fraction,
/// a non-number or a value outside [min, max] is refused as "<command>: <name> = <text> (must be an integer
/// in [min, max])".
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& command, const std::string& name, int& value,
                                const std::string& help, std::int64_t min, std::int64_t max);
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& command, const std::string& name,
                                std::int64_t& value, const std::string& help, std::int64_t min, std::int64_t max);
/// A seed: an integer in [0, 2^64 - 1], exactly (never wrapped or saturated: -1 and 2^64 are refused).
CLI::Option* add_seed_option(CLI::App* cmd, const std::string& command, const std::string& name,
                             std::uint64_t& value, const std::string& help);
/// A real option read by parse_double; a non-number is refused as "<command>: <name> = '<text>' (must be
/// a number)". Range checks (finite, > 0, ...) belong to the validators.
CLI::Option* add_real_option(CLI::App* cmd, const std::string& command, const std::string& name, double& value,
                             const std::string& help);
CLI::Option* add_real_option(CLI::App* cmd, const std::string& command, const std::string& name,
                             std::optional<double>& value, const std::string& help);

/// The most worker threads --threads accepts (more would only fail to start).
inline constexpr int kMaxThreads = 1024;

/// parse_format with the message naming the command and --format.
enum class Format;
Format parse_format_option(const std::string& command, const std::string& text);
/// The word of `words` nearest `typed` when it is close (at most 2 edits, under a third of its letters), else "".
std::string nearest_word(std::string_view typed, const std::vector<std::string>& words);
/// --format of a command whose output is one table (kernel, features, frequencies, precision): parse_format_option
/// and "npy"; "" (these commands' default) is npy when `out` ends in ".npy", else csv. npy to a terminal is refused.
Format parse_table_format_option(const std::string& command, const std::string& text, const std::string& out);
/// The --format help of those commands.
inline constexpr const char* kTableFormatHelp =
    "csv (default), md, json, latex or npy (a NumPy structured array, one field per column; the default when --out "
    "ends in .npy)";

/// A command group: its registration function and the top-level commands it registers.
struct CommandGroup {
  void (*add)(CLI::App& app, const CliContext& ctx);
  std::vector<std::string> commands;
};
/// Every group, in help order. run_cli registers only the group of the command typed: building the whole tree of
/// options takes 0.4 ms, a twentieth of a fixed-basis suite (tests check each group registers exactly `commands`).
const std::vector<CommandGroup>& command_groups();

/// Parses and runs. Returns the process exit code: 0 ok, 3 a verification check failed (output
/// complete), 2 bad input, 1 internal failure.
int run_cli(int argc, char** argv);

}  // namespace ropekit
