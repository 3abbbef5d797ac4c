// ropekit.fit, fit_params, fit_spectrum and list_targets: fixed-basis fits, tuning an encoding's parameters and
// spectral fits (as `ropekit fit` and `ropekit fit-params`).
#include "bindings.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <numbers>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/fit/fit_summary.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/rope_kernel.hpp"
#include "ropekit/fit/fit_run.hpp"
#include "ropekit/commands/fit_layers.hpp"
#include "ropekit/fit/param_fit.hpp"
#include "ropekit/commands/tune_request.hpp"
#include "ropekit/fit/tunable.hpp"
#include "ropekit/lie/generator_io.hpp"
#include "ropekit/lie/lie.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "ropekit/design/design.hpp"
#include "ropekit/design/inverse_design.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "ropekit/version.hpp"
#include "targets/kernel_table.hpp"
#include "targets/target.hpp"

namespace ropekit::bindings {

struct FitRun {
  std::vector<std::string> encodings, methods, targets;
  int train_context = 0;
  std::vector<int> eval_contexts;
  double ridge = 1e-4;
  std::vector<std::int64_t> seeds{0};
  int num_freqs = 16, head_dim = 64, freq_index = 3, second_freq_index = 5, threads = 0;
  double theta = 1e4, gamma = 1e-4;
  std::string tau = "bounded";
};

// `ropekit fit` without --config, from the same options (fit_config.hpp fit_config, as the command line's, which
// checks them all).
FitConfig fit_config(const FitRun& a) {
  FitOptions o;
  o.methods = a.methods;
  o.encodings = a.encodings;
  o.targets = a.targets;
  o.basis.num_freqs = a.num_freqs;
  o.basis.head_dim = a.head_dim;
  o.basis.base = a.theta;
  o.basis.gamma = a.gamma;
  o.basis.train_context = a.train_context;
  o.tau = a.tau;
  o.threads = a.threads;
  o.eval_contexts = a.eval_contexts;
  o.seeds = a.seeds;
  o.ridge = a.ridge;
  o.freq_index = a.freq_index;
  o.second_freq_index = a.second_freq_index;
  o.encodings_key = "--encodings";
  return ropekit::fit_config(o);
}

// The summary's columns as `ropekit fit --summary` prints them (reports/fit_rows.hpp's fit_summary_table): NaN
// where there is no runner-up.
py::dict fit_summary_dict(const std::vector<FitSummaryRow>& rows) {
  std::vector<std::string> target, best, runner_up;
  std::vector<std::int64_t> context, methods, seeds;
  std::vector<double> best_mse, runner_up_mse, ratio;
  for (const auto& r : rows) {
    target.push_back(r.target);
    context.push_back(r.context);
    best.push_back(r.best);
    best_mse.push_back(r.best_mse);
    runner_up.push_back(r.runner_up);
    runner_up_mse.push_back(r.runner_up_mse);
    ratio.push_back(r.ratio());
    methods.push_back(r.methods);
    seeds.push_back(r.seeds);
  }
  py::dict d;
  d["target"] = target;
  d["context"] = int_column(context);
  d["best"] = best;
  d["best_mse"] = column(std::move(best_mse));
  d["runner_up"] = runner_up;
  d["runner_up_mse"] = column(std::move(runner_up_mse));
  d["ratio"] = column(std::move(ratio));
  d["methods"] = int_column(methods);
  d["seeds"] = int_column(seeds);
  return d;
}

py::dict fit_rows_dict(const std::vector<FitRow>& rows) {
  std::vector<std::int64_t> seed, context, n_features, n_train, rank;
  std::vector<std::string> target, method, split;
  std::vector<double> mse, r2, cond;
  for (const auto& r : rows) {
    seed.push_back(r.seed);
    target.push_back(r.target);
    method.push_back(r.method);
    context.push_back(r.context);
    split.push_back(r.split);
    n_features.push_back(r.n_features);
    n_train.push_back(r.n_train);
    mse.push_back(r.mse);
    r2.push_back(r.r2);
    cond.push_back(r.cond);
    rank.push_back(r.rank);
  }
  py::dict d;
  d["seed"] = int_column(seed);
  d["target"] = target;
  d["method"] = method;
  d["context"] = int_column(context);
  d["split"] = split;
  d["n_features"] = int_column(n_features);
  d["n_train"] = int_column(n_train);
  d["mse"] = column(std::move(mse));
  d["r2"] = column(std::move(r2));
  d["cond"] = column(std::move(cond));
  d["rank"] = int_column(rank);
  return d;
}

py::dict py_fit(const py::object& encodings, const py::object& targets, int train_context,
                const std::vector<int>& eval_contexts, double ridge, const py::object& methods,
                const std::vector<std::int64_t>& seeds, int num_freqs, int head_dim, double theta, double gamma,
                const std::string& tau, int target_freq_index, int second_freq_index, int threads, bool summary,
                const py::object& model, const py::object& layer_type) {
  FitRun a;
  // model=: every layer type (or the one named), each fitted on the lags its window shows (commands/fit_layers.hpp).
  std::vector<ModelLayer> layers;
  if (!model.is_none() || !layer_type.is_none())
    layers = bound_model_layers("ropekit fit", "--encodings", encodings, model, layer_type, true);
  for (const auto& l : layers) a.encodings.push_back(l.encoding);
  if (layers.empty())
    a.encodings = encodings.is_none() ? std::vector<std::string>{} : to_strings(encodings, "ropekit fit", "encodings");
  a.targets = targets.is_none() ? std::vector<std::string>{} : to_strings(targets, "ropekit fit", "targets");
  a.methods = methods.is_none() ? std::vector<std::string>{} : to_strings(methods, "ropekit fit", "methods");
  a.train_context = train_context;
  a.eval_contexts = eval_contexts;
  a.ridge = ridge;
  a.seeds = seeds;
  a.num_freqs = num_freqs;
  a.head_dim = head_dim;
  a.theta = theta;
  a.gamma = gamma;
  a.tau = tau;
  a.freq_index = target_freq_index;
  a.second_freq_index = second_freq_index;
  a.threads = threads;
  FitConfig config;
  const std::vector<FitRow> rows = interruptible([&] {
    config = fit_config(a);
    return run_fit_layers(config, layers, a.threads);
  });
  for (const std::string& note : fit_layer_notes(config, layers)) {
    const std::string text = "ropekit.fit: note: " + note;
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) throw py::error_already_set();
  }
  if (summary) return fit_summary_dict(summarize_fit(rows));
  py::dict d = fit_rows_dict(rows);
  if (layers.empty()) return d;
  std::vector<std::string> label;
  for (const auto& r : rows) label.push_back(r.layer_type);
  py::dict out;
  out["layer_type"] = label;
  for (const auto& item : d) out[item.first] = item.second;
  return out;
}

// ---------------------------------------------------------------------------------------------
// fit_params (tuning an encoding; cli/cli_fit_params.cpp run_tuning) and fit_spectrum

py::tuple py_fit_params(const std::string& encoding_text, const py::object& free_in, const py::object& targets_in,
                        int train_context, const std::vector<int>& eval_contexts, double ridge, int starts,
                        std::uint64_t seed, int max_iterations, int head_dim, int num_freqs, double theta, double gamma,
                        int freq_index, int second_freq_index) {
  // The arguments bound to the library's request (commands/tune_request.hpp), as `ropekit fit-params` binds its options.
  TuneRequest request;
  request.encoding = encoding_text;
  request.free = to_strings(free_in, "ropekit fit-params", "free");
  if (!targets_in.is_none()) request.targets = to_strings(targets_in, "ropekit fit-params", "targets");
  request.train_context = train_context;
  request.eval_contexts = eval_contexts;
  request.ridge = ridge;
  request.starts = starts;
  request.seed = seed;
  request.max_iterations = max_iterations;
  request.head_dim = head_dim;
  request.num_freqs = num_freqs;
  request.theta = theta;
  request.gamma = gamma;
  request.freq_index = freq_index;
  request.second_freq_index = second_freq_index;
  const TunePlan plan = interruptible([&] { return plan_tuning(request); });
  const Encoding& e = plan.encoding;
  const TuneOptions o = tune_options(request);

  struct Row {
    std::string target, which, encoding, split;
    std::int64_t context, lags;
    double mse, r2, cond;
  };
  std::vector<Row> rows;
  py::dict summary;
  for (std::size_t ti = 0; ti < plan.targets.size(); ++ti) {
    const TuneTarget& r = plan.targets[ti];
    const TunedTarget tuned = interruptible([&] { return tune_target(request, plan, ti, o); });
    const TuneResult& result = tuned.result;
    for (const auto* enc : {&e, &result.tuned}) {
      const std::string which = enc == &e ? "untuned" : "tuned", spelled = spelling(*enc);
      for (const auto& s : enc == &e ? tuned.untuned : tuned.tuned)
        rows.push_back({r.name, which, spelled, s.split, s.context, s.lags, s.mse, s.r2, s.cond});
    }
    py::list st;
    for (const auto& s : result.starts) {
      py::dict x;
      x["kind"] = s.kind, x["initial_cost"] = s.initial_cost, x["final_cost"] = s.final_cost;
      x["iterations"] = s.iterations, x["termination"] = s.termination;
      st.append(x);
    }
    py::dict t;
    t["tuned_encoding"] = spelling(result.tuned);
    t["params"] = py::cast(result.params);
    t["untuned_cost"] = result.untuned_cost;
    t["tuned_cost"] = result.tuned_cost;
    t["best_start"] = result.best_start + 1;  // 1-based, as the command line's JSON and Markdown
    t["starts"] = st;
    t["notes"] = result.notes;
    t["seconds"] = result.seconds;
    summary[py::str(r.name)] = t;
  }
  py::dict d;
  std::vector<std::string> target, which, enc, split;
  std::vector<std::int64_t> context, lags;
  std::vector<double> mse, r2, cond;
  for (const auto& r : rows) {
    target.push_back(r.target), which.push_back(r.which), enc.push_back(r.encoding), split.push_back(r.split);
    context.push_back(r.context), lags.push_back(r.lags);
    mse.push_back(r.mse), r2.push_back(r.r2), cond.push_back(r.cond);
  }
  d["target"] = target;
  d["which"] = which;
  d["encoding"] = enc;
  d["context"] = int_column(context);
  d["split"] = split;
  d["lags"] = int_column(lags);
  d["mse"] = column(std::move(mse));
  d["r2"] = column(std::move(r2));
  d["cond"] = column(std::move(cond));
  return py::make_tuple(d, summary);
}

py::tuple py_fit_spectrum(const std::string& spectrum, const py::object& lags_in, const py::object& values_in,
                          int max_iterations) {
  const std::string command = "ropekit fit-params";
  KernelTable table;
  if (py::isinstance<py::str>(lags_in) && values_in.is_none()) {
    table = read_kernel_table(cast_arg<std::string>(lags_in, command, "lags", "a path or an array of lags"), command + ": --kernel-data");
  } else {
    table.lag = to_lags(lags_in, 1, command, "--kernel-data").col(0);
    table.value = to_lags(values_in, 1, command, "--kernel-data").col(0);
    if (table.lag.size() != table.value.size())
      bad(command, "--kernel-data", fmt::format("{} lags and {} values", table.lag.size(), table.value.size()),
          "one value per lag");
  }
  const SpectralFitResult r = interruptible([&] { return fit_spectrum(spectrum, table, command, max_iterations); });
  std::vector<std::string> name, note;
  std::vector<double> start, estimate, se;
  for (const auto& p : r.params)
    name.push_back(p.name), start.push_back(p.start), estimate.push_back(p.estimate), se.push_back(p.std_error),
        note.push_back(p.note);
  py::dict d;
  d["parameter"] = name;
  d["start"] = column(std::move(start));
  d["estimate"] = column(std::move(estimate));
  d["std_error"] = column(std::move(se));
  d["note"] = note;  // "at its upper bound 1e+06" and the like, else ""
  py::dict s;
  s["spectrum"] = spelling(r.fitted);
  s["rows"] = r.rows, s["rss"] = r.rss, s["rms"] = r.rms;
  s["initial_cost"] = r.initial_cost, s["final_cost"] = r.final_cost, s["iterations"] = r.iterations;
  s["termination"] = r.termination, s["seconds"] = r.seconds, s["derivatives"] = r.derivatives;
  return py::make_tuple(d, s);
}


py::dict py_list_targets() {
  std::vector<std::string> n, y;
  for (const auto& [name, formula] : target_families()) n.push_back(name), y.push_back(formula);
  py::dict d;
  d["spellings"] = n, d["y(d)"] = y;
  return d;
}

}  // namespace ropekit::bindings
