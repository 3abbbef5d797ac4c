#include "probes/cli.hpp"

#include <malloc.h>

#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "reports/output.hpp"
#include "ropekit/error.hpp"
#include "ropekit/version.hpp"

namespace ropekit {

namespace {

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@+%") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

int run_cli(int argc, char** argv) {
  // Keep freed feature matrices (megabytes each) in the heap for reuse instead of returning them to
  // the kernel: re-faulting fresh pages cost about a sixth of a fixed-basis run.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);

  CliContext ctx;
  ctx.command = "ropekit";
  for (int i = 1; i < argc; ++i) ctx.command += " " + shell_quote(argv[i]);

  CLI::App app{fmt::format("ropekit {}: numerical analysis of rotary positional encodings (float64)", kVersion),
               "ropekit"};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);
  app.fallthrough(false);
  add_fixed_basis_commands(app, ctx);
  add_rf_rope_commands(app, ctx);
  add_lie_commands(app, ctx);

  // Whatever reached stdout must not be lost (a full disk, a closed descriptor): a run that printed
  // its result into the void fails with exit code 2.
  auto finish = [](int code) { return flush_stdout() ? code : 2; };
  // --help and --version text goes through emit, whose checked write names the reason of a failure.
  auto print = [&app](const CLI::Error& e) {
    std::ostringstream text;
    const int code = app.exit(e, text);
    try {
      emit("", text.str());
    } catch (const InputError& err) {
      std::cerr << "error: " << err.what() << "\n";
      return 2;
    }
    return code;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return finish(print(e));
  } catch (const CLI::CallForAllHelp& e) {
    return finish(print(e));
  } catch (const CLI::CallForVersion& e) {
    return finish(print(e));
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << " (see ropekit --help)\n";
    return 2;
  } catch (const ChecksFailed&) {
    return finish(3);
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
  return finish(0);
}

}  // namespace ropekit
