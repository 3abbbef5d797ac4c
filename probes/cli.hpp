#pragma once
// The `ropekit` command line. Each command group registers its subcommands on the app; the
// commands throw InputError for bad input, which run_cli turns into "error: ..." and exit code 2.

#include <string>

namespace CLI {
class App;
}

namespace ropekit {

/// Thrown by a verification command after its complete output is written, when a check failed:
/// run_cli exits with code 3 (0: every check passed, 2: bad input, 1: internal failure).
struct ChecksFailed {};

struct CliContext {
  std::string command;  ///< the exact command line, shell-quoted, recorded in reports
};

/// fit, features, list, probe (the fixed-basis foundation).
void add_fixed_basis_commands(CLI::App& app, const CliContext& ctx);

/// kernel, verify master|variance|convergence|sampling (RF-RoPE, issue 3).
void add_rf_rope_commands(CLI::App& app, const CliContext& ctx);
/// lie build|check|kernel, jordan positionwise (N-D RoPE and position-wise Jordan-RoPE).
void add_lie_commands(CLI::App& app, const CliContext& ctx);

/// Parses and runs. Returns the process exit code: 0 ok, 3 a verification check failed (output
/// complete), 2 bad input, 1 internal failure.
int run_cli(int argc, char** argv);

}  // namespace ropekit
