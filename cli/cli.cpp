#include "cli/cli.hpp"

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "reports/output.hpp"
#include "reports/table.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/core/spelling.hpp"
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

// Rewrites the option's text to canonical decimal before CLI11 converts it, or throws InputError
// (which run_cli prints as the one-line error).
CLI::Validator integer_transform(const std::string& command, const std::string& name, std::int64_t min,
                                 std::int64_t max) {
  return CLI::Validator(
      [=](std::string& text) {
        text = std::to_string(parse_integer_in(text, Where(command), name, min, max));
        return std::string();
      },
      "", "");
}

CLI::Validator real_transform(const std::string& command, const std::string& name) {
  return CLI::Validator(
      [=](std::string& text) {
        const auto v = parse_double(text);
        if (!v) throw_bad_value(Where(command), name, "'" + text + "'", "a number");
        text = format_number(*v);  // canonical: CLI11's conversion then reads exactly this double
        return std::string();
      },
      "", "");
}

// CLI11's messages echo what was typed: each word bounded as error.hpp's bounded() does.
std::string bounded_words(std::string_view text) {
  std::string out;
  for (std::size_t pos = 0; pos <= text.size();) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    if (pos > 0) out += ' ';
    out += bounded(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// "ropekit verify master": the command and subcommands CLI11 has parsed.
std::string command_path(const CLI::App& app) {
  std::string path = "ropekit";
  for (const CLI::App* sub = &app;;) {
    const auto subs = sub->get_subcommands();
    if (subs.empty()) break;
    sub = subs.front();
    path += " " + sub->get_name();
  }
  return path;
}

}  // namespace

namespace {

// Levenshtein distance (insertions, deletions, substitutions), for "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_word(std::string_view typed, const std::vector<std::string>& words) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& w : words) {
    const std::size_t d = edit_distance(typed, w);
    if (d < best_d) best_d = d, best = w;
  }
  // Close: at most 2 edits, and fewer than a third of the longer word's letters (so "x" is not "fit").
  const std::size_t longer = std::max(typed.size(), best.size());
  return best_d <= 2 && 3 * best_d < longer ? best : "";
}

Format parse_format_option(const std::string& command, const std::string& text) {
  std::optional<Format> f;
  try {
    f = parse_format(text);
  } catch (const InputError&) {
  }
  if (!f || *f == Format::npy)
    throw_bad_value(Where(command), "--format", "'" + text + "'",
                    std::string("one of csv, md, json, latex") +
                        (f ? " (npy: the tables of kernel, features, frequencies and precision)" : ""));
  return *f;
}

Format parse_table_format_option(const std::string& command, const std::string& text, const std::string& out) {
  const bool npy_name = out.size() > 4 && out.compare(out.size() - 4, 4, ".npy") == 0;
  Format f = Format::csv;
  if (!text.empty()) {
    try {
      f = parse_format(text);
    } catch (const InputError&) {
      throw_bad_value(Where(command), "--format", "'" + text + "'", "one of csv, md, json, latex, npy");
    }
  } else if (npy_name) {
    f = Format::npy;
  }
  // Binary bytes on a terminal help nobody; a pipe or a file is fine.
  if (f == Format::npy && (out.empty() || out == "-") && isatty(STDOUT_FILENO))
    throw_bad_value(Where(command), "--format", "'npy' to a terminal",
                    "a file (--out FILE.npy) or a pipe: npy is binary");
  return f;
}

CLI::Option* add_integer_option(CLI::App* cmd, const std::string& command, const std::string& name, int& value,
                                const std::string& help, std::int64_t min, std::int64_t max) {
  return cmd->add_option(name, value, help)->transform(integer_transform(command, name, min, max));
}

CLI::Option* add_integer_option(CLI::App* cmd, const std::string& command, const std::string& name,
                                std::int64_t& value, const std::string& help, std::int64_t min, std::int64_t max) {
  return cmd->add_option(name, value, help)->transform(integer_transform(command, name, min, max));
}

CLI::Option* add_seed_option(CLI::App* cmd, const std::string& command, const std::string& name,
                             std::uint64_t& value, const std::string& help) {
  return cmd->add_option(name, value, help)
      ->transform(CLI::Validator(
          [=](std::string& text) {
            text = std::to_string(parse_unsigned_in(text, Where(command), name, UINT64_MAX));
            return std::string();
          },
          "", ""));
}

CLI::Option* add_real_option(CLI::App* cmd, const std::string& command, const std::string& name, double& value,
                             const std::string& help) {
  return cmd->add_option(name, value, help)->transform(real_transform(command, name));
}

CLI::Option* add_real_option(CLI::App* cmd, const std::string& command, const std::string& name,
                             std::optional<double>& value, const std::string& help) {
  return cmd->add_option(name, value, help)->transform(real_transform(command, name));
}

const std::vector<CommandGroup>& command_groups() {
  static const std::vector<CommandGroup> groups = {
      {add_fixed_basis_commands, {"fit", "features", "list", "probe"}},
      {add_rf_rope_commands, {"kernel", "verify"}},
      {add_lie_commands, {"lie", "jordan"}},
      {add_encoding_commands, {"frequencies", "check"}},
      {add_fit_params_commands, {"fit-params"}},
      {add_design_commands, {"design"}},
      {add_merge_command, {"merge"}},
      {add_model_command, {"model"}},
      {add_frameworks_command, {"frameworks"}},
      {add_precision_command, {"precision"}},
      {add_report_command, {"report"}},
  };
  return groups;
}

int run_cli(int argc, char** argv) {
  // A file-size limit (`ulimit -f`) sends SIGXFSZ, which kills by default; ignored, the write returns EFBIG and the
  // writer reports "cannot write '...': File too large", exit 2, leaving no partial file.
  ::signal(SIGXFSZ, SIG_IGN);
  // Keep freed feature matrices (megabytes each) in the heap for reuse instead of returning them to
  // the kernel: re-faulting fresh pages cost about a sixth of a fixed-basis run.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);

  CliContext ctx;
  ctx.command = "ropekit";
  for (int i = 1; i < argc; ++i) ctx.command += " " + shell_quote(argv[i]);
  ctx.run = "ropekit";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    bool dropped = false;
    for (const char* name : {"--shard", "--out", "--threads"}) {
      const std::string n = name;
      if (arg == n) {
        ++i;  // and its value
        dropped = true;
      } else if (arg.rfind(n + "=", 0) == 0) {
        dropped = true;
      }
      if (dropped) break;
    }
    if (!dropped) ctx.run += " " + shell_quote(arg);
  }

  CLI::App app{fmt::format("ropekit {}: numerical analysis of rotary positional encodings (float64)", kVersion),
               "ropekit"};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);
  app.fallthrough(false);
  // The group of the command typed, or every group (--help, --version, a typo, nothing: help lists them all).
  const CommandGroup* only = nullptr;
  if (argc > 1)
    for (const auto& g : command_groups())
      for (const auto& name : g.commands)
        if (name == argv[1]) only = &g;
  for (const auto& g : command_groups())
    if (!only || only == &g) g.add(app, ctx);

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
  // The command words (without options), for messages that come before CLI11 knows the subcommand.
  std::string words = "ropekit";
  for (int i = 1; i < argc && i < 4 && argv[i][0] != '-'; ++i) words += " " + bounded(argv[i]);

  // The options CLI11 splits at commas: it drops empty items ("--eval-contexts 128,,256" read as 128,256).
  std::set<std::string> comma_lists;
  std::vector<const CLI::App*> apps{&app};
  while (!apps.empty()) {
    const CLI::App* a = apps.back();
    apps.pop_back();
    for (const CLI::Option* o : a->get_options())
      if (o->get_delimiter() == ',')
        for (const auto& name : o->get_lnames()) comma_lists.insert("--" + name);
    for (const CLI::App* sub : a->get_subcommands([](const CLI::App*) { return true; })) apps.push_back(sub);
  }
  // An option given an empty value ("--lags ''", "--q=") would read as not given and silently take its
  // default, and an empty item of a comma list would vanish: refuse both.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) continue;
    const auto eq = arg.find('=');
    if ((eq != std::string::npos && eq + 1 == arg.size()) ||
        (eq == std::string::npos && i + 1 < argc && argv[i + 1][0] == '\0')) {
      std::cerr << "error: " << words << ": " << bounded(arg.substr(0, eq)) << " = '' (must be a non-empty value)\n";
      return 2;
    }
    const std::string name = arg.substr(0, eq);
    if (!comma_lists.count(name)) continue;
    const std::string value = eq != std::string::npos ? arg.substr(eq + 1) : (i + 1 < argc ? argv[i + 1] : "");
    if (value.find(",,") != std::string::npos || value.front() == ',' || value.back() == ',') {
      std::cerr << "error: " << words << ": " << name << " = " << quote(value)
                << " (must be a comma-separated list without empty items)\n";
      return 2;
    }
  }

  // A mistyped command word: refused with the nearest command ("ropekit kernal": did you mean 'kernel'?) rather than
  // CLI11's "A subcommand is required".
  {
    const CLI::App* at = &app;
    std::string path = "ropekit";
    for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
      const auto subs = at->get_subcommands([](const CLI::App*) { return true; });
      if (subs.empty()) break;  // the words from here are the command's own arguments
      const CLI::App* next = nullptr;
      std::vector<std::string> names;
      for (const CLI::App* sub : subs) {
        names.push_back(sub->get_name());
        if (sub->get_name() == argv[i]) next = sub;
      }
      if (!next) {
        const std::string near = nearest_word(argv[i], names);
        std::cerr << "error: " << path << ": " << quote(bounded(argv[i])) << " is not a command"
                  << (near.empty() ? "" : " (did you mean '" + near + "'?)") << " (see " << path << " --help)\n";
        return 2;
      }
      at = next;
      path += " " + next->get_name();
    }
  }

  try {
    // ROPEKIT_SIMD (vecmath.hpp) is read here, so a bad value fails every command, not only those with sincos.
    (void)simd_path();
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return finish(print(e));
  } catch (const CLI::CallForAllHelp& e) {
    return finish(print(e));
  } catch (const CLI::CallForVersion& e) {
    return finish(print(e));
  } catch (const CLI::ParseError& e) {
    // Name the (sub)command being parsed: "error: ropekit fit: --config is required (see ropekit fit --help)".
    const std::string path = command_path(app);
    // A mistyped option: the nearest of the command's own ("--encodng": did you mean --encoding?).
    std::string hint;
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
      const CLI::App* at = &app;
      for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands()) at = subs.front();
      std::vector<std::string> options;
      for (const CLI::Option* o : at->get_options())
        for (const auto& n : o->get_lnames()) options.push_back("--" + n);
      for (const std::string& extra : at->remaining())
        if (extra.rfind("--", 0) == 0 && hint.empty())
          if (const std::string near = nearest_word(extra.substr(0, extra.find('=')), options); !near.empty())
            hint = " (did you mean " + near + "?)";
    }
    std::cerr << "error: " << (path == "ropekit" ? "" : path + ": ") << bounded_words(e.what()) << hint << " (see "
              << path << " --help)\n";
    return 2;
  } catch (const ChecksFailed&) {
    return finish(3);
  } catch (const InputError& e) {
    // Every refusal names the command; the library's checks below the command's own name only their part, and a
    // check shared by subcommands names their group ("ropekit verify: ..." from verify master).
    std::string what = e.what();
    const std::string parsed = command_path(app);
    const std::string& path = parsed == "ropekit" ? words : parsed;  // before parsing (ROPEKIT_SIMD): the words
    const std::string head = what.substr(0, what.find(": "));
    if (head.rfind("ropekit ", 0) != 0) what = path + ": " + what;
    else if (head != path && (path + " ").rfind(head + " ", 0) == 0) what.replace(0, head.size(), path);
    std::cerr << "error: " << what << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // Sizes are bounded up front (half the physical memory); this is memory other processes hold.
    std::cerr << "error: " << words << ": out of memory (the request fits the budget of half the physical "
                 "memory, but the machine could not provide it; free memory or reduce the sizes)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
  return finish(0);
}

}  // namespace ropekit
