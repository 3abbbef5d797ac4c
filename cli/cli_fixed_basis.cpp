// ropekit fit | features | list | probe: the fixed-basis commands.
#include <array>
#include <chrono>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/cli_encoding.hpp"
#include "config/fit_config_yaml.hpp"
#include "reports/fit_rows.hpp"
#include "probes/probe.hpp"
#include "reports/output.hpp"
#include "reports/progress.hpp"
#include "reports/shard.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/version.hpp"
#include "reports/table.hpp"
#include "ropekit/encodings/basis.hpp"
#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/commands/fit_layers.hpp"
#include "ropekit/precision/pipelines.hpp"
#include "targets/target.hpp"

namespace ropekit {

namespace {

struct FitArgs {
  std::string config, format = "csv", out, section;
  std::vector<std::string> methods, targets, encodings, models;
  std::vector<ModelLayer> layers;  // --model's layer types: the last layers.size() encodings
  int threads = 0;
  // A run without --config: its parameters as options (defaults: BasisParams, TargetParams, ridge 1e-4,
  // seed 0, train_points = L, the paper configs' target_freq_index 3 and second_freq_index 5).
  BasisParams basis;
  int freq_index = 3, second_freq_index = 5;
  double ridge = 1e-4;
  std::string tau, shard;
  bool summary = false;  // one row per target and eval length: the best method and the runner-up
  std::vector<std::string> eval_contexts, seeds;
  std::vector<CLI::Option*> run_options;  // refused with --config, which sets them
  CLI::Option *train_context = nullptr, *eval_contexts_option = nullptr;
};

struct FeatureArgs {
  std::string method, encoding, lags = "0:8", format, out, config, bounded_tau;  // format "": csv, or npy
  std::vector<std::string> models;  // --model FILE[:LAYER_TYPE]: the encoding of one layer type
  std::optional<std::string> layer_type;  // that layer type's label: the rows' first column
  BasisParams basis;
  // Explicit basis options, which override --config's values.
  CLI::Option *num_freqs = nullptr, *head_dim = nullptr, *theta = nullptr, *gamma = nullptr, *train_context = nullptr;
  CLI::Option* lags_opt = nullptr;
};

struct ProbeArgs {
  std::vector<std::string> names;
  bool list = false, all = false;
  std::string out_dir = "reports/out", rows;
};

// Memory and time per printed cell of `features` (measured on the reference machine with 2e7 cells:
// CSV 100 bytes and 2.7e6 cells/s, JSON 210 bytes and 7e5 cells/s; the float64 value, its Cell, its text
// and a copy while it is written), with margins.
double bytes_per_cell(Format f) { return f == Format::json ? 240 : 120; }
double cells_per_second(Format f) { return f == Format::json ? 2e5 : 1e6; }

// `fit` without --config: the run's parameters from the options (README "Command line").
FitConfig fit_config_from_options(const FitArgs& a) {
  const std::string command = "ropekit fit";
  const Where where = Where::options(command);
  if (!a.section.empty()) throw_bad_value(where, "section", "'" + a.section + "'", "given only with --config");
  // Without --config the options are the run (the library refuses a run without encodings or methods too; here the
  // command line's alternatives are named).
  if (a.encodings.empty() && a.methods.empty())
    throw InputError(command + ": --encoding = none (must be given, or --methods or --config: --encoding E... or "
                               "--methods M..., with --train-context and --eval-contexts, or --config FILE.yaml)");
  if (!a.train_context->count())
    throw InputError(command + ": --train-context = none (must be set without --config: the training lags 0..L-1)");
  if (!a.eval_contexts_option->count())
    throw InputError(command + ": --eval-contexts = none (must be set without --config: lengths T1,T2,... to score)");
  FitOptions o;
  o.methods = a.methods;
  o.encodings = a.encodings;
  o.targets = a.targets;
  o.basis = a.basis;
  if (!a.tau.empty()) o.tau = a.tau;
  for (const auto& t : a.eval_contexts)
    o.eval_contexts.push_back(static_cast<int>(parse_integer_in(t, where, "--eval-contexts", 1, FitConfig::kMaxLength)));
  if (!a.seeds.empty()) o.seeds.clear();
  for (const auto& s : a.seeds)
    o.seeds.push_back(parse_integer_in(s, where, "--seed", 0, std::numeric_limits<std::int64_t>::max()));
  o.ridge = a.ridge;
  o.freq_index = a.freq_index;
  o.second_freq_index = a.second_freq_index;
  return fit_config(o);
}

// fit --shard i/n: the shard's bases (methods, then encodings, in the run's order), dealt by their estimated cost.
// Each basis is one fit that solves every target and seed at once, and its rows do not depend on the other bases
// (run_fixed_basis), so a run of the shard's bases alone reproduces the unsharded rows bit for bit.
void run_fit_shard(const FitConfig& config, const std::vector<ModelLayer>& layers, Shard shard, Format format,
                   const FitArgs& a, const CliContext& ctx) {
  const std::size_t nm = config.methods.size(), nb = nm + config.encodings.size();
  std::vector<ModelLayer> part_layers;
  auto only = [&](const std::vector<std::size_t>& bases) {
    FitConfig c = config;
    c.methods.clear();
    c.encodings.clear();
    part_layers.clear();
    for (std::size_t b : bases) {
      (b < nm ? c.methods.push_back(config.methods[b]) : c.encodings.push_back(config.encodings[b - nm]));
      if (b >= nm && !layers.empty()) part_layers.push_back(layers[b - nm]);
    }
    return c;
  };
  std::vector<double> costs(nb);
  for (std::size_t b = 0; b < nb; ++b) costs[b] = only({b}).cost().seconds;
  const std::vector<std::size_t> mine = shard_items(costs, shard);
  // Rows in the reference's order: seed, target, basis, then the train row and one eval row per context.
  const std::size_t nt = config.targets.size(), per = 1 + config.eval_contexts.size();
  std::vector<std::size_t> positions;
  for (std::size_t k = 0; k < config.seeds.size(); ++k)
    for (std::size_t j = 0; j < nt; ++j)
      for (std::size_t b : mine)
        for (std::size_t c = 0; c < per; ++c) positions.push_back(((k * nt + j) * nb + b) * per + c);
  std::vector<FitRow> rows;
  if (!mine.empty()) {
    const FitConfig part = only(mine);
    announce("ropekit fit", fmt::format("shard {}/{}: {} of {} bases x {} targets, lengths up to {}", shard.index,
                                        shard.count, mine.size(), nb, nt, config.max_length()),
             part.cost().seconds);
    rows = run_fit_layers(part, part_layers, a.threads);
  }
  const ShardHeader h = shard_header(shard, format, ctx.run, kVersion, config.seeds.size() * nt * nb * per, std::move(positions));
  emit(a.out, shard_file(h, fit_rows_table(rows, !a.layers.empty())));
}

void run_fit(const FitArgs& a, const CliContext& ctx) {
  const Format format = parse_format_option("ropekit fit", a.format);
  const std::optional<Shard> shard = a.shard.empty() ? std::nullopt : std::optional(parse_shard(a.shard, "ropekit fit"));
  FitConfig config;
  if (a.config.empty()) {
    config = fit_config_from_options(a);
  } else {
    for (const auto* opt : a.run_options)
      if (opt->count()) {
        std::string given;
        for (const auto& r : opt->results()) given += (given.empty() ? "" : ",") + r;
        throw_bad_value("ropekit fit", opt->get_name(), "'" + given + "'",
                        "absent with --config, which sets it (or drop --config)");
      }
    ConfigOverrides o;
    if (!a.methods.empty()) o.methods = a.methods;
    if (!a.encodings.empty()) o.encodings = a.encodings;
    if (!a.targets.empty()) o.targets = a.targets;
    if (!a.section.empty()) o.section = a.section;
    config = load_fit_config(a.config, o);  // validates, sizes included (FitConfig::cost)
  }
  check_output_path(a.out);
  // --model's layer types: one per encoding (the encodings given as such have none).
  std::vector<ModelLayer> layers;
  if (!a.layers.empty()) {
    if (a.layers.size() > config.encodings.size()) throw std::logic_error("run_fit: more layer types than encodings");
    layers.assign(config.encodings.size() - a.layers.size(), ModelLayer{});
    layers.insert(layers.end(), a.layers.begin(), a.layers.end());
  }
  for (const auto& note : fit_layer_notes(config, layers)) std::cerr << "ropekit fit: note: " << note << "\n";
  if (shard && a.summary)
    throw_bad_value("ropekit fit", "--summary", "given with --shard",
                    "absent: a shard holds part of the rows (merge the shards, then summarize the merged rows)");
  if (shard) {
    run_fit_shard(config, layers, *shard, format, a, ctx);
    return;
  }
  const std::string what =
      config.encodings.empty()
          ? fmt::format("{} methods", config.methods.size())
          : fmt::format("{} methods and {} encodings", config.methods.size(), config.encodings.size());
  announce("ropekit fit", fmt::format("{} x {} targets, lengths up to {}", what, config.targets.size(),
                                      config.max_length()),
           config.cost().seconds);
  const std::vector<FitRow> rows = run_fit_layers(config, layers, a.threads);
  emit(a.out, render(a.summary ? fit_summary_table(summarize_fit(rows)) : fit_rows_table(rows, !a.layers.empty()),
                     format));
}

void run_features(const FeatureArgs& a) {
  const std::string command = "ropekit features";
  const Where where = Where::options(command);
  if (!a.method.empty() && !a.encoding.empty())
    throw_bad_value(command, "--method", quote(a.method), "absent with --encoding (give one of them)");
  if (a.method.empty() && a.encoding.empty())
    throw InputError(command + ": give exactly one of --method METHOD and --encoding ENCODING");
  if (!a.encoding.empty()) {
    // The spelling carries every parameter: the basis options would be silently ignored, so they are refused.
    const std::pair<const char*, bool> basis_options[] = {
        {"config", !a.config.empty()},        {"num_freqs", a.num_freqs->count() > 0},
        {"head_dim", a.head_dim->count() > 0}, {"theta", a.theta->count() > 0},
        {"gamma", a.gamma->count() > 0},       {"train_context", a.train_context->count() > 0},
        {"bounded_tau", !a.bounded_tau.empty()}};
    for (const auto& [name, given] : basis_options)
      if (given)
        throw_bad_value(where, name, "given with --encoding",
                        "absent: the encoding's spelling carries its parameters (e.g. jordan:m=3,dim=64,F=16,L=4096)");
    run_encoding_features(
        EncodingFeatureArgs{a.encoding, a.lags_opt->count() ? a.lags : "", a.format, a.out, a.layer_type});
    return;
  }
  const Format format = parse_table_format_option(command, a.format, a.out);
  BasisParams p = a.basis;
  if (!a.config.empty()) {
    // The config's basis, with every option given on the command line overriding its value.
    p = load_fit_config(a.config).basis;
    if (a.num_freqs->count()) p.num_freqs = a.basis.num_freqs;
    if (a.head_dim->count()) p.head_dim = a.basis.head_dim;
    if (a.theta->count()) p.base = a.basis.base;
    if (a.gamma->count()) p.gamma = a.basis.gamma;
    if (a.train_context->count()) p.train_context = a.basis.train_context;
  }
  check_output_path(a.out);
  if (!a.bounded_tau.empty()) {
    if (a.bounded_tau != "true" && a.bounded_tau != "false")
      throw_bad_value(where, "bounded_tau", "'" + a.bounded_tau + "'", "true or false");
    p.bounded_tau = a.bounded_tau == "true";
  }
  p.validate(where);
  const Method m = parse_method(a.method, command + ": --method");
  const Eigen::VectorXd lags = parse_lags(a.lags, 1, where, "--lags").col(0);
  for (double d : lags)
    if (!(d >= 0)) throw_bad_value(where, "lags", format_number(d), "finite and >= 0 (causal lags)");
  if (const auto o = find_lag_overflow(m, p, lags))
    throw_bad_value(where, "lags", format_number(o->lag),
                    fmt::format("at most {} for {} with --train-context {}: beyond it {} exceeds the float64 range",
                                format_number(o->limit), spelling(m), p.train_context, o->cause));

  // Memory and time: the trigonometric tables, the matrix and the printed table.
  const double rows = static_cast<double>(lags.size());
  auto cost_of = [&](const BasisParams& q) {
    const double cells = rows * (1.0 + n_features(m, q));
    return Cost{features_bytes(m, q, rows) + cells * bytes_per_cell(format),
                cells / cells_per_second(format) + rows * q.num_freqs / kElementsPerSecond};
  };
  const Cost cost = cost_of(p);
  if (!cost.fits()) {
    BasisParams one = p;
    one.num_freqs = 1;
    if (cost_of(one).fits()) {
      const auto max_f = largest_fitting(1, p.num_freqs, [&](std::int64_t f) {
        BasisParams q = p;
        q.num_freqs = static_cast<int>(f);
        return cost_of(q).fits();
      });
      check_cost(where, "num_freqs", std::to_string(p.num_freqs), cost, std::to_string(max_f),
                 fmt::format("for {} on {} lags", spelling(m), lags.size()));
    }
    const double per_lag = cost_of(one).bytes / rows;
    check_cost(where, "lags", fmt::format("{} lags", lags.size()), cost_of(one),
               fmt::format("{} lags", static_cast<long long>(memory_budget_bytes() / per_lag)),
               fmt::format("for {} with --num-freqs 1", spelling(m)));
  }
  announce(command, fmt::format("{} lags x {} columns of {}", lags.size(), n_features(m, p), spelling(m)),
           cost.seconds);

  const Eigen::MatrixXd X = features(m, p, lags);
  Table t;
  t.columns = {"lag"};
  for (auto& n : feature_names(m, p)) t.columns.push_back(n);
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    std::vector<Cell> row = {lags[i]};
    for (Eigen::Index j = 0; j < X.cols(); ++j) row.push_back(X(i, j));
    t.add_row(std::move(row));
  }
  emit(a.out, render(t, format));
}

// What `ropekit list` lists, with what each row is: printed by `list` alone and named by the unknown-item message.
constexpr std::array<std::array<const char*, 2>, 6> kListables = {{
    {"methods", "the fixed-basis methods of fit: readable spelling, reference names, columns"},
    {"targets", "the target kernels y(d) of fit"},
    {"probes", "the built-in paper reproductions of `ropekit probe`"},
    {"encodings", "the encoding families and their spellings (--verbose: keys and an example)"},
    {"schemes", "the context-scaling schemes' keys, defaults, constraints and transformers keys"},
    {"pipelines", "the frameworks' RoPE pipelines of `ropekit precision`: names, dtype per stage, convention, source"},
}};

void run_list(const std::string& what, const std::string& format_name, bool verbose) {
  const Format format = parse_format_option("ropekit list", format_name);
  if (what.empty()) {  // nothing named: what can be listed (a first `ropekit list` is not an error)
    if (verbose) throw_bad_value("ropekit list", "--verbose", "given without a list", "used with encodings only");
    Table t;
    t.columns = {"list", "what it shows"};
    for (const auto& [name, shows] : kListables) t.add_row({std::string(name), std::string(shows)});
    emit("", render(t, format));
    return;
  }
  if (verbose && what != "encodings")
    throw_bad_value("ropekit list", "--verbose", "given with '" + what + "'", "used with encodings only");
  Table t;
  if (what == "methods") {
    t.columns = {"readable spelling", "reference names", "columns", "count"};
    for (const auto& f : method_families()) t.add_row({f.readable, f.reference_names, f.columns, f.count});
  } else if (what == "targets") {
    t.columns = {"spellings", "y(d)"};
    for (const auto& [n, f] : target_families()) t.add_row({n, f});
  } else if (what == "probes") {
    t.columns = {"probe", "description"};
    for (const auto& p : builtin_probes()) t.add_row({p.name, p.description});
  } else if (what == "encodings") {
    t.columns = {"spelling", "aliases", "operator", "features"};
    if (verbose) t.columns.insert(t.columns.end(), {"keys", "example"});
    for (const auto& f : encoding_families()) {
      std::vector<Cell> row = {f.spelling, f.aliases, f.operator_, f.features};
      if (verbose) row.insert(row.end(), {f.keys, f.example});
      t.add_row(std::move(row));
    }
  } else if (what == "schemes") {
    t.columns = {"scheme", "key", "default", "constraint", "meaning", "transformers key"};
    for (const auto& k : scheme_key_infos())
      t.add_row({k.scheme, k.key, k.default_value, k.constraint, k.meaning, k.hf_key});
  } else if (what == "pipelines") {
    t.columns = pipeline_list_columns();
    for (const auto& r : pipeline_list_rows()) t.add_row(std::vector<Cell>(r.begin(), r.end()));
  } else {
    std::string names;
    for (std::size_t i = 0; i < kListables.size(); ++i)
      names += std::string(i == 0 ? "" : i + 1 == kListables.size() ? " or " : ", ") + kListables[i][0];
    throw_bad_value("ropekit list", "what", "'" + what + "'", names);
  }
  emit("", render(t, format));
}

void run_probes(const ProbeArgs& a, const CliContext& ctx) {
  if (a.list) {
    run_list("probes", "md", false);
    return;
  }
  std::vector<const ProbeInfo*> chosen;
  if (a.all) {
    if (!a.names.empty()) throw InputError("ropekit probe: give probe names or --all, not both");
    for (const auto& p : builtin_probes()) chosen.push_back(&p);
  } else {
    if (a.names.empty()) throw InputError("ropekit probe: no probe named (give a NAME, --all or --list)");
    for (const auto& n : a.names) chosen.push_back(&find_probe(n));
  }
  if (!a.rows.empty() && chosen.size() != 1) throw InputError("ropekit probe: --rows needs exactly one probe");
  ProbeContext pc{a.out_dir, ctx.command, a.rows};
  for (const auto* p : chosen) {
    if (a.rows.empty()) announce("ropekit probe " + p->name, p->description, p->typical_seconds);
    const auto t0 = std::chrono::steady_clock::now();
    // A probe's files land together after it succeeds; a failure (a full disk) leaves none of them.
    OutputBatch batch;
    const ProbeResult r = p->run(pc);
    batch.commit();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::string files;
    for (const auto& f : r.files) files += (files.empty() ? "" : ", ") + f;
    emit("", fmt::format("{:<22} {:>7.1f} ms  {}\n{:<22}             {}\n", p->name, ms, files, "", r.summary));
  }
}

}  // namespace

void add_fixed_basis_commands(CLI::App& app, const CliContext& ctx) {
  {
    auto a = std::make_shared<FitArgs>();
    auto* fit = app.add_subcommand("fit", "Ridge-fit fixed bases (methods or any encoding of 1-D lags) to target "
                                          "kernels, from a YAML run config or from options; one row per (seed, "
                                          "target, method, split/context)");
    const std::string cmd = "ropekit fit";
    fit->add_option("--config", a->config, "YAML run config (the reference's schema, plus `encodings:`)");
    fit->add_option("--methods", a->methods, "methods to fit, replacing the config's (names or spellings)");
    fit->add_option("--encoding,--encodings", a->encodings,
                    "encodings to fit (spellings: rope:dim=64,F=16, jordan_m3, direct-sum:[rope,alibi], ...), "
                    "replacing the config's; rows carry the spelling in the `method` column");
    auto* model = add_model_option(fit, a->models, true);
    model->description(model->get_description() +
                       "; rows then start with a layer_type column, a layer type with a window trains and is scored "
                       "on the lags it sees, and a query temperature is not applied (notes say so)");
    fit->add_option("--targets,--target", a->targets,
                    "targets to fit (ropekit list targets), replacing the defaults (phase, linear, mixed without "
                    "--config)");
    fit->add_option("--section", a->section, "toy or benchmarks, when the config has both");
    // Without --config: the run's parameters.
    a->train_context = add_integer_option(fit, cmd, "--train-context", a->basis.train_context,
                                          "L: fit on lags 0..L-1 (required without --config)", 1, FitConfig::kMaxLength);
    a->eval_contexts_option =
        fit->add_option("--eval-contexts", a->eval_contexts, "T1,T2,...: score lags 0..T-1 (required without --config)")
            ->delimiter(',');
    a->run_options = {
        a->train_context,
        a->eval_contexts_option,
        add_real_option(fit, cmd, "--ridge", a->ridge, "ridge lambda on every column (default 1e-4)"),
        fit->add_option("--seed", a->seeds, "seeds (default 0; they only matter with fewer training points than L)")
            ->delimiter(','),
        add_integer_option(fit, cmd, "--num-freqs", a->basis.num_freqs, "F of methods and default encodings (16)", 1,
                           kMaxNumFreqs),
        add_integer_option(fit, cmd, "--head-dim", a->basis.head_dim, "h: grid theta^(-2k/h) (64)", 2, INT32_MAX),
        add_real_option(fit, cmd, "--theta", a->basis.base, "RoPE base (1e4)"),
        add_real_option(fit, cmd, "--gamma", a->basis.gamma, "damping (1e-4)"),
        fit->add_option("--tau", a->tau, "shear time: bounded (default) or raw"),
        add_integer_option(fit, cmd, "--target-freq-index", a->freq_index, "targets' idx (3)", 0, INT32_MAX),
        add_integer_option(fit, cmd, "--second-freq-index", a->second_freq_index, "targets' idx2 (5)", 0, INT32_MAX),
    };
    fit->add_flag("--summary", a->summary,
                  "one row per target and eval length instead of the fit rows: the method with the lowest eval MSE "
                  "(mean over seeds), the runner-up and their ratio");
    fit->add_option("--format", a->format, "csv, md, json or latex")->capture_default_str();
    fit->add_option("--out", a->out, "output file (default: stdout); written only if the run succeeds");
    add_integer_option(fit, "ropekit fit", "--threads", a->threads,
                       "worker threads (0: all cores); the numbers do not depend on it", 0, kMaxThreads)
        ->capture_default_str();
    fit->add_option("--shard", a->shard,
                    "i/n: compute shard i (counted from 0) of n of the rows, for job arrays; `ropekit merge` joins "
                    "the n files into the unsharded output");
    fit->callback([a, &ctx] {
      for (auto& l : model_layers("ropekit fit", a->models, true)) {
        a->encodings.push_back(l.encoding);
        a->layers.push_back(std::move(l));
      }
      run_fit(*a, ctx);
    });
  }
  {
    auto a = std::make_shared<FeatureArgs>();
    auto* f = app.add_subcommand("features", "Print a method's or an encoding's feature columns at the given lags");
    f->add_option("--method", a->method, "method name or spelling, e.g. jordan-scaled:m=4,c=0.1");
    auto* enc = f->add_option("--encoding", a->encoding,
                              "an encoding spelling instead of --method, e.g. xpos:dim=8 (see `ropekit list encodings`)");
    auto* model = add_model_option(f, a->models, false)->excludes(enc);
    model->description(model->get_description() + "; rows then start with a layer_type column");
    a->lags_opt = f->add_option("--lags", a->lags, "lags: 0,1,2 or start:stop[:step] (k-D encodings: \"1,0;0,2\", "
                                                   "no default)")
                      ->capture_default_str();
    const std::string cmd = "ropekit features";
    f->add_option("--config", a->config,
                  "take the basis parameters from this YAML run config; options given explicitly override it");
    a->num_freqs = add_integer_option(f, cmd, "--num-freqs", a->basis.num_freqs, "F", 1, kMaxNumFreqs)
                       ->capture_default_str();
    a->head_dim = add_integer_option(f, cmd, "--head-dim", a->basis.head_dim, "h (frequency grid theta^(-2k/h))", 2,
                                     INT32_MAX)
                      ->capture_default_str();
    a->theta = add_real_option(f, cmd, "--theta", a->basis.base, "RoPE base")->capture_default_str();
    a->gamma = add_real_option(f, cmd, "--gamma", a->basis.gamma, "damping")->capture_default_str();
    a->train_context =
        add_integer_option(f, cmd, "--train-context", a->basis.train_context, "L", 1, INT32_MAX)
            ->capture_default_str();
    f->add_option("--bounded-tau", a->bounded_tau, "true or false (default true)");
    f->add_option("--format", a->format, kTableFormatHelp);
    f->add_option("--out", a->out, "output file (default: stdout)");
    f->callback([a] {
      if (const auto layer = take_model_encoding("ropekit features", a->models, a->encoding))
        a->layer_type = layer->label;
      run_features(*a);
    });
  }
  {
    auto what = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("md");
    auto verbose = std::make_shared<bool>(false);
    auto* l = app.add_subcommand("list", "List what exists: methods, targets, probes, encodings, schemes or pipelines");
    l->add_option("what", *what,
                  "methods, targets, probes, encodings, schemes (the context-scaling schemes' keys, defaults and "
                  "transformers keys) or pipelines (precision's framework pipelines); none: what can be listed");
    l->add_option("--format", *format, "md, csv, json or latex")->capture_default_str();
    l->add_flag("--verbose", *verbose, "encodings: also each family's keys (constraint, default) and an example");
    l->callback([what, format, verbose] { run_list(*what, *format, *verbose); });
  }
  {
    auto a = std::make_shared<ProbeArgs>();
    auto* p = app.add_subcommand("probe", "Run built-in probes, writing Markdown reports and their data");
    p->add_option("names", a->names, "probe names (see --list)");
    p->add_flag("--list", a->list, "list the built-in probes");
    p->add_flag("--all", a->all, "run every built-in probe");
    p->add_option("--out-dir", a->out_dir, "directory for the reports")->capture_default_str();
    p->add_option("--rows", a->rows, "render a fixed-basis probe from these CSV rows (ropekit's or the reference's) "
                                     "instead of computing them");
    p->callback([a, &ctx] { run_probes(*a, ctx); });
  }
}

}  // namespace ropekit
