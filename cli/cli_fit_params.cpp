// `ropekit fit-params` (issue 8): tune an encoding's free parameters to a target (variable projection with
// Ceres, fit/param_fit.hpp) and report untuned vs tuned MSE / R^2 on the training lags and at each evaluation
// length; or fit a spectral family's parameters to measured kernel values, with standard errors.
#include <chrono>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "reports/frequency_export.hpp"
#include "reports/output.hpp"
#include "reports/progress.hpp"
#include "reports/table.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/fit/param_fit.hpp"
#include "ropekit/commands/tune_request.hpp"
#include "targets/kernel_table.hpp"
#include "targets/target.hpp"

namespace ropekit {

namespace {

constexpr const char* kCommand = "ropekit fit-params";

struct FitParamsArgs {
  std::string encoding, spectrum, kernel_data, format = "md", out, exp0rt;
  std::vector<std::string> free, targets, models;
  std::vector<std::string> eval_contexts{"1024", "2048", "4096", "8192"};
  int train_context = 1024, head_dim = 64, num_freqs = 16, freq_index = 3, second_freq_index = 5, starts = 3;
  int max_iterations = 200;
  double theta = 1e4, gamma = 1e-4, ridge = 1e-4;
  std::uint64_t seed = 1;
};

struct Row {
  std::string target, which, encoding;
  int context;
  std::string split;
  Eigen::Index n;
  double mse, r2, cond;
};

// Untuned or tuned rows of one target (fit/encoding_score.hpp).
std::vector<Row> rows_of(const Encoding& e, const std::string& which, const std::string& target,
                         const std::vector<EncodingScore>& scores) {
  std::vector<Row> rows;
  const std::string spelled = spelling(e);
  for (const auto& s : scores) rows.push_back({target, which, spelled, s.context, s.split, s.lags, s.mse, s.r2, s.cond});
  return rows;
}

void run_tuning(const FitParamsArgs& a) {
  const Where where = Where::options(kCommand);
  if (!a.spectrum.empty() || !a.kernel_data.empty())
    throw_bad_value(kCommand, a.spectrum.empty() ? "--kernel-data" : "--spectrum",
                    quote(a.spectrum.empty() ? a.kernel_data : a.spectrum),
                    "absent with --encoding (one mode: --encoding E --free NAMES, or --spectrum S --kernel-data FILE)");
  // The options bound to the library's request (commands/tune_request.hpp), which checks them.
  TuneRequest request;
  request.command = kCommand;
  request.encoding = a.encoding;
  request.free = a.free;
  request.targets = a.targets;
  request.train_context = a.train_context;
  request.ridge = a.ridge;
  request.starts = a.starts;
  request.seed = a.seed;
  request.max_iterations = a.max_iterations;
  request.head_dim = a.head_dim;
  request.num_freqs = a.num_freqs;
  request.theta = a.theta;
  request.gamma = a.gamma;
  request.freq_index = a.freq_index;
  request.second_freq_index = a.second_freq_index;
  request.eval_contexts.clear();
  for (const auto& text : a.eval_contexts)
    request.eval_contexts.push_back(
        static_cast<int>(parse_integer_in(text, Where(kCommand), "--eval-contexts", 1, 1 << 20)));
  const std::vector<int>& contexts = request.eval_contexts;
  const Format format = parse_format_option(kCommand, a.format);
  if (format == Format::latex) throw_bad_value(where, "format", "'latex'", "one of md, csv, json");
  const std::size_t target_count = a.targets.empty() ? toy_targets().size() : a.targets.size();
  if (!a.exp0rt.empty()) check_frequency_export_path(a.exp0rt, a.out, where);
  if (!a.exp0rt.empty() && target_count != 1)
    throw_bad_value(where, "export", "'" + a.exp0rt + "'", "given with exactly one --target (one tuned encoding)");
  check_output_path(a.out);

  const TunePlan plan = plan_tuning(request);
  const Encoding& e = plan.encoding;
  // The bound assumes every start runs all --max-iterations; most converge in tens, so only runs whose bound
  // is long are announced (progress lines follow after 2 s). The starts counted are the ones run: --starts, plus
  // the scan's starts of one free base, factor or scale (it announced 3 and ran 4).
  const int starts = tuning_start_count(plan.tunable, a.starts);
  if (plan.cost.seconds > 30)
    announce(kCommand,
             fmt::format("{} targets x {} starts{}, {} parameters", plan.targets.size(), starts,
                         starts == a.starts ? "" : fmt::format(" ({} and {} from a scan of {})", a.starts,
                                                               starts - a.starts, plan.tunable.names[0]),
                         static_cast<double>(plan.tunable.n_params())),
             plan.cost.seconds);
  const auto clock0 = std::chrono::steady_clock::now();
  TuneOptions o = tune_options(request);

  std::vector<Row> rows;
  nlohmann::ordered_json tuned_json = nlohmann::ordered_json::object(), summary_json = nlohmann::ordered_json::object();
  std::string md_sections;
  Encoding last_tuned = e;
  for (std::size_t ti = 0; ti < plan.targets.size(); ++ti) {
    const TuneTarget& r = plan.targets[ti];
    const Eigen::Index n_train = r.n_train;
    o.progress = [&](const std::string& line) {
      // Long runs say what they do on stderr (short ones stay silent; stdout is the report): each start as it
      // ends, and every 10 s of a scan or a start still running.
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - clock0).count() > 2)
        std::cerr << kCommand << ": target " << r.name << " (" << ti + 1 << " of " << plan.targets.size()
                  << "): " << line << std::endl;
    };
    const TunedTarget tuned = tune_target(request, plan, ti, o);
    const TuneResult& result = tuned.result;
    last_tuned = result.tuned;
    auto untuned_rows = rows_of(e, "untuned", r.name, tuned.untuned);
    auto tuned_rows = rows_of(result.tuned, "tuned", r.name, tuned.tuned);
    rows.insert(rows.end(), untuned_rows.begin(), untuned_rows.end());
    rows.insert(rows.end(), tuned_rows.begin(), tuned_rows.end());
    const auto& st = result.starts[static_cast<std::size_t>(result.best_start)];
    tuned_json[r.name] = spelling(result.tuned);
    nlohmann::ordered_json starts = nlohmann::ordered_json::array();
    for (const auto& s : result.starts)
      starts.push_back({{"kind", s.kind}, {"initial_cost", s.initial_cost}, {"final_cost", s.final_cost},
                        {"iterations", s.iterations}, {"termination", s.termination}});
    summary_json[r.name] = {{"termination", st.termination},     {"iterations", st.iterations},
                            {"initial_cost", result.untuned_cost}, {"final_cost", result.tuned_cost},
                            {"best_start", result.best_start + 1},  // 1-based, as the Markdown
                            {"seconds", result.seconds},         {"cond", tuned_rows.front().cond},
                            {"starts", starts},                  {"notes", result.notes}};
    // One free parameter: starts that ended in other minima are a warning (issue 20 item 6), on stderr.
    for (const auto& note : result.notes) std::cerr << kCommand << ": target " << r.name << ": warning: " << note << "\n";
    Table s;
    s.columns = {"start", "kind", "initial cost", "final cost", "iterations", "termination"};
    for (std::size_t i = 0; i < result.starts.size(); ++i) {
      const auto& x = result.starts[i];
      s.add_row({static_cast<std::int64_t>(i + 1) , x.kind + (static_cast<int>(i) == result.best_start ? " (best)" : ""),
                 x.initial_cost, x.final_cost, static_cast<std::int64_t>(x.iterations), x.termination});
    }
    Table q;
    q.columns = {"which", "context", "split", "lags", "mse", "r2"};
    for (const auto* rs : {&untuned_rows, &tuned_rows})
      for (const auto& row : *rs)
        q.add_row({row.which, static_cast<std::int64_t>(row.context), row.split, static_cast<std::int64_t>(row.n),
                   row.mse, row.r2});
    md_sections += fmt::format(
        "## Target `{}`\n\nTuned encoding: `{}`\n\nObjective |Xw - y|^2 + ridge |w|^2 on {} training lags: {} untuned, "
        "{} tuned ({} s, {} starts, best: start {}); cond(X^T X + ridge I) of the tuned basis: {}.\n\n{}\nCeres "
        "(Levenberg-Marquardt on the variable-projection residual, exact Jacobian):\n\n{}\n",
        r.name, spelling(result.tuned), n_train, format_significant(result.untuned_cost, 6),
        format_significant(result.tuned_cost, 6), format_significant(result.seconds, 3), result.starts.size(),
        result.best_start + 1, format_significant(tuned_rows.front().cond, 4), to_markdown(q), to_markdown(s));
  }

  std::string text;
  if (format == Format::json) {
    nlohmann::ordered_json j;
    j["command"] = "ropekit fit-params";
    j["encoding"] = spelling(e);
    j["free"] = a.free;
    j["ridge"] = a.ridge;
    j["train_context"] = a.train_context;
    j["tuned_encoding"] = tuned_json;
    j["rows"] = nlohmann::ordered_json::array();
    for (const auto& r : rows)
      j["rows"].push_back({{"target", r.target}, {"which", r.which}, {"context", r.context}, {"split", r.split},
                           {"lags", r.n}, {"mse", r.mse}, {"r2", r.r2}, {"cond", r.cond}});
    j["summary"] = summary_json;
    text = j.dump(2) + "\n";
  } else if (format == Format::csv) {
    Table t;
    t.columns = {"target", "which", "encoding", "context", "split", "lags", "mse", "r2", "cond"};
    for (const auto& r : rows)
      t.add_row({r.target, r.which, r.encoding, static_cast<std::int64_t>(r.context), r.split,
                 static_cast<std::int64_t>(r.n), r.mse, r.r2, r.cond});
    text = to_csv(t);
  } else {
    text = fmt::format("# ropekit fit-params\n\n- encoding: `{}`\n- free: {}\n- training lags 0..{}, ridge {}, "
                       "evaluation lengths {}\n\n{}",
                       spelling(e), fmt::join(a.free, ", "), a.train_context - 1, format_number(a.ridge),
                       fmt::join(contexts, ", "), md_sections);
  }
  OutputBatch batch;  // the export and the report land together (a failed write leaves neither)
  if (!a.exp0rt.empty())
    write_file_atomic(a.exp0rt, frequency_export_bytes(a.exp0rt, frequencies(last_tuned).theta.col(0)));
  emit(a.out, text);
  batch.commit();
}

void run_spectral(const FitParamsArgs& a) {
  if (a.kernel_data.empty())
    throw InputError(std::string(kCommand) + ": --kernel-data = none (must be a CSV table lag,value with --spectrum)");
  if (!a.free.empty() || !a.targets.empty())
    throw InputError(std::string(kCommand) + ": --free/--target given with --spectrum (must be one mode: mark free "
                                             "spectral parameters with ?, e.g. matern:nu=?,l=?)");
  // --export writes an encoding's tuned frequencies; a spectral fit has none (it wrote nothing with exit 0).
  if (!a.exp0rt.empty())
    throw_bad_value(Where::options(kCommand), "export", "'" + a.exp0rt + "'",
                    "absent with --spectrum (it writes tuned frequencies of --encoding; the fit's estimates are in "
                    "--format csv or json)");
  const Format format = parse_format_option(kCommand, a.format);
  if (format == Format::latex) throw_bad_value(Where::options(kCommand), "format", "'latex'", "one of md, csv, json");
  check_output_path(a.out);
  const auto table = read_kernel_table(a.kernel_data, std::string(kCommand) + ": --kernel-data");
  const auto r = fit_spectrum(a.spectrum, table, kCommand, a.max_iterations,
                              [](const std::string& what, double seconds) { announce(kCommand, what, seconds); });
  // A parameter at or beside its bound (no interior optimum there) is a warning, on stderr.
  for (const auto& p : r.params)
    if (!p.note.empty())
      std::cerr << kCommand << ": warning: " << p.name << " = " << format_number(p.estimate) << ": " << p.note << "\n";
  Table t;
  t.columns = {"parameter", "start", "estimate", "std_error"};
  for (const auto& p : r.params) t.add_row({p.name, p.start, p.estimate, p.std_error});
  std::string text;
  if (format == Format::json) {
    nlohmann::ordered_json j;
    j["command"] = "ropekit fit-params";
    j["spectrum"] = spelling(r.fitted);
    j["params"] = nlohmann::ordered_json::array();
    for (const auto& p : r.params) {
      j["params"].push_back({{"name", p.name}, {"start", p.start}, {"estimate", p.estimate}, {"std_error", p.std_error}});
      if (!p.note.empty()) j["params"].back()["note"] = p.note;
    }
    j["rows"] = r.rows;
    j["rss"] = r.rss;
    j["rms"] = r.rms;
    j["summary"] = {{"termination", r.termination}, {"iterations", r.iterations}, {"initial_cost", r.initial_cost},
                    {"final_cost", r.final_cost}, {"seconds", r.seconds}, {"derivatives", r.derivatives}};
    text = j.dump(2) + "\n";
  } else if (format == Format::csv) {
    text = to_csv(t);
  } else {
    text = fmt::format("# ropekit fit-params: spectral family\n\n- fitted: `{}`\n- data: {} ({} rows)\n- RMS residual "
                       "{}\n- Ceres: {} after {} iterations, cost {} -> {} ({} s); derivatives: {}\n- standard errors: "
                       "sqrt(diag(s^2 (J^T J)^-1)), s^2 = RSS/(n - p)\n\n{}",
                       spelling(r.fitted), a.kernel_data, r.rows, format_significant(r.rms, 4), r.termination,
                       r.iterations, format_significant(r.initial_cost, 4), format_significant(r.final_cost, 4),
                       format_significant(r.seconds, 3), r.derivatives, to_markdown(t));
    for (const auto& p : r.params)
      if (!p.note.empty()) text += fmt::format("\n- {}: {}\n", p.name, p.note);
  }
  emit(a.out, text);
}

}  // namespace

void add_fit_params_commands(CLI::App& app, const CliContext&) {
  auto a = std::make_shared<FitParamsArgs>();
  auto* c = app.add_subcommand(
      "fit-params",
      "Tune an encoding's parameters to target kernels (Ceres, variable projection: the linear read-out is "
      "ridge-fitted as in `fit`), or fit a spectral family to measured kernel values (--spectrum, --kernel-data)");
  const std::string cmd = kCommand;
  auto* enc = c->add_option("--encoding", a->encoding, "the encoding to tune (a spelling: rope, damped, jordan:m=3, ...)");
  add_model_option(c, a->models, false)->excludes(enc);
  c->add_option("--free", a->free, "parameters to tune, e.g. theta,gamma (theta: every frequency)")->delimiter(',');
  c->add_option("--target,--targets", a->targets,
                "target families (ropekit list targets), data:FILE.csv (lag,value) or kernel:ENCODING "
                "(default: phase, linear, mixed)");
  add_integer_option(c, cmd, "--train-context", a->train_context, "L: tune on lags 0..L-1 (1024)", 1, 1 << 20);
  c->add_option("--eval-contexts", a->eval_contexts, "T1,T2,...: score lags 0..T-1 (1024,2048,4096,8192)")
      ->delimiter(',');
  add_real_option(c, cmd, "--ridge", a->ridge, "ridge lambda > 0 (1e-4)");
  add_integer_option(c, cmd, "--starts", a->starts,
                     "starts: the untuned encoding, the periodogram's peaks, then seeded perturbations (3)", 1, 1000);
  add_seed_option(c, cmd, "--seed", a->seed, "seed of the perturbed starts (1)");
  add_integer_option(c, cmd, "--max-iterations", a->max_iterations, "Levenberg-Marquardt iterations per start (200)",
                     1, 100000);
  add_integer_option(c, cmd, "--head-dim", a->head_dim, "h: frequency grid theta^(-2k/h) of encodings and targets (64)",
                     2, INT32_MAX);
  add_integer_option(c, cmd, "--num-freqs", a->num_freqs, "F of default encodings (16)", 1, 1 << 24);
  add_real_option(c, cmd, "--theta", a->theta, "RoPE base of default encodings and targets (1e4)");
  add_real_option(c, cmd, "--gamma", a->gamma, "damping of default encodings and damped_wave (1e-4)");
  add_integer_option(c, cmd, "--target-freq-index", a->freq_index, "targets' idx (3)", 0, INT32_MAX);
  add_integer_option(c, cmd, "--second-freq-index", a->second_freq_index, "targets' idx2 (5)", 0, INT32_MAX);
  c->add_option("--spectrum", a->spectrum,
                "spectral family with free parameters marked ?: matern:nu=?,l=? (or nu=?2.5 to start at 2.5)");
  c->add_option("--kernel-data", a->kernel_data, "CSV table lag,value of measured kernel values (with --spectrum)");
  c->add_option("--format", a->format, "md, csv or json")->capture_default_str();
  c->add_option("--out", a->out, "output file (default: stdout); written only if the run succeeds");
  c->add_option("--export", a->exp0rt, "the tuned frequencies: FILE.npy, FILE.txt (one per line) or FILE.json");
  c->callback([a] {
    take_model_encoding(kCommand, a->models, a->encoding);
    if (!a->encoding.empty())
      run_tuning(*a);
    else if (!a->spectrum.empty())
      run_spectral(*a);
    else
      throw InputError(std::string(kCommand) + ": --encoding = none (must be given, or --spectrum: --encoding E "
                                               "--free NAMES [--target T...], or --spectrum S --kernel-data FILE)");
  });
}

}  // namespace ropekit
