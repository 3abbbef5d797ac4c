// ropekit frequencies | check, and the --encoding paths of `kernel` and `features` (cli_encoding.hpp):
// any encoding family of spec encodings.md section 2 through lib/ropekit/encoding.hpp.
//   frequencies: the rotary frequencies theta_i, wavelengths and attention factor, optionally as a framework
//                computing them in float32 gets them (section 3);
//   check:       exactness (group law, orthogonality, reversibility; relativity for sinusoidal) over a window,
//                the structural verdicts, and RoFormer's long-term decay bound (section 5).
#include "cli/cli_encoding.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "reports/output.hpp"
#include "reports/kernel_plot.hpp"
#include "reports/progress.hpp"
#include "reports/table.hpp"
#include "ropekit/core/budget.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/commands/check_request.hpp"
#include "ropekit/commands/features_request.hpp"
#include "ropekit/commands/frequencies_request.hpp"
#include "ropekit/commands/kernel_request.hpp"
#include "ropekit/encodings/rope_kernel.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

namespace {

Cell lag_cell(std::span<const double> lag) {
  if (lag.size() == 1) return lag.front();
  return lag_text(lag);
}

// NaN (a quantity the family does not have) is an empty cell, never the text "nan".
Cell number(double v) { return std::isnan(v) ? Cell() : Cell(v); }

// The encodings' notes (encoding_notes: values accepted as transformers does though it warns or falls back), one
// line each on stderr: "<command>: note: <text>". Printed once the request is checked, before any output.
void print_notes(const std::string& command, const std::vector<Encoding>& encodings) {
  std::vector<std::string> seen;
  for (const Encoding& e : encodings)
    for (const std::string& note : encoding_notes(e))
      if (std::find(seen.begin(), seen.end(), note) == seen.end()) {
        std::cerr << command << ": note: " << note << "\n";
        seen.push_back(note);
      }
}

// The --plot-* options bound to the figure's spec (each value checked; the columns against the table by KernelPlot).
KernelPlotSpec kernel_plot_spec(const KernelPlotArgs& a, const Where& where) {
  KernelPlotSpec s;
  if (!a.columns.empty()) s.columns = a.columns;
  s.title = a.title;
  if (!a.size.empty()) std::tie(s.width, s.height) = parse_plot_size(a.size, where, "plot_size");
  if (!a.x_scale.empty()) s.x_scale = a.x_scale;
  if (!a.xrange.empty()) std::tie(s.xmin, s.xmax) = parse_plot_range(a.xrange, where, "plot_xrange");
  for (const auto& text : a.yrange) {
    const auto eq = text.find('=');
    if (eq == std::string::npos && s.columns.size() != 1)
      throw_bad_value(where, "plot_yrange", text, "COLUMN=LO:HI with several panels (e.g. kernel=-0.2:1)");
    const std::string column = eq == std::string::npos ? s.columns.front() : text.substr(0, eq);
    if (s.yrange.count(column)) throw_bad_value(where, "plot_yrange", text, "given once per column");
    s.yrange[column] = parse_plot_range(eq == std::string::npos ? text : text.substr(eq + 1), where, "plot_yrange");
  }
  s.log_y = a.log_y;
  s.labels = a.labels;
  if (!a.line.empty()) s.line = a.line;
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// kernel --encoding

void run_encoding_kernel(const EncodingKernelArgs& a) {
  const std::string command = "ropekit kernel";
  const Where where = Where::options(command);
  const Format format = parse_table_format_option(command, a.format, a.out);
  // The options bound to the library's request (commands/kernel_request.hpp), which checks them.
  KernelRequest request;
  request.command = command;
  request.encodings = a.encodings;
  request.lags_text = a.lags;
  request.rho = a.rho.value_or(1.0);
  request.seq_len = a.seq_len;
  request.layers = a.layers;
  request.position = a.position;
  const KernelPlan plan = plan_kernel(request);
  // --columns: those only, in the order given (checked as Python's columns=); else every column.
  const std::vector<std::string> asked =
      a.columns.empty() ? std::vector<std::string>{} : checked_kernel_columns(request, plan, a.columns);
  const std::vector<Encoding>& encs = plan.encodings;
  const int k = plan.k;
  // 1-D lags are streamed block by block (any number of them, memory of one block; a plot keeps per-pixel
  // envelopes); k-D lags are written out in full: those are held (parse_lags, at most 2^20).
  std::optional<LagStream> stream;
  Lags lags;
  if (k == 1) stream.emplace(plan.lag_text, where, "--lags");
  else lags = kernel_lags(request, plan);
  const std::size_t block = static_cast<std::size_t>(a.block_rows);
  Lags chunk(stream ? static_cast<Eigen::Index>(block) : 0, 1);
  // The next block of lags into `chunk` (a view of the held lags when there is no stream); false when done.
  Eigen::Index held_next = 0;
  auto next_block = [&]() -> Eigen::Index {
    if (stream) return static_cast<Eigen::Index>(stream->next(chunk.data(), block));
    const Eigen::Index n = std::min<Eigen::Index>(static_cast<Eigen::Index>(block), lags.rows() - held_next);
    chunk = lags.middleRows(held_next, n);
    held_next += n;
    return n;
  };
  auto rewind = [&] {
    if (stream) stream->rewind();
    held_next = 0;
  };
  const bool any_rf = plan.any_rf;
  const std::int64_t lag_count = stream ? stream->count() : static_cast<std::int64_t>(lags.rows());  // exact
  // A lag the j-th encoding's layer type cannot see (its window hides |lag| >= span).
  auto masked = [&](std::size_t j, double lag) { return kernel_masked(request, j, lag); };
  if (a.plot.empty() && a.plot_options.any())
    throw InputError("ropekit kernel: --plot-* options are given with --plot FILE.svg only");
  if (!a.plot.empty() && k != 1)
    throw_bad_value(where, "plot", a.plot, fmt::format("given with 1-D lags only (these encodings take {}-D lags)", k));
  if (!a.plot.empty() && a.plot == a.out)
    throw_bad_value(where, "plot", a.plot, "a file other than --out");
  check_output_path(a.out);
  check_output_path(a.plot);

  const double held_rows = stream ? static_cast<double>(block) : static_cast<double>(lags.rows());
  check_kernel_budget(request, plan, lag_count, held_rows);
  // rf-rope's lags are checked before any row is written (a pass over a stream), once the budget has let them in.
  if (any_rf) {
    for (Eigen::Index n; (n = next_block()) > 0;) check_kernel_lags(request, plan, chunk.topRows(n));
    rewind();
  }
  // Every column whatever the encodings (a cell a family does not have is empty); Markdown and LaTeX, for reading,
  // leave out the columns no encoding here fills.
  const bool any_plain = plan.any_plain, readable = format == Format::md || format == Format::latex;
  // The value columns in plottable_kernel_columns' order: kernel and content variance, rf-rope's two, plain RoPE's
  // three; `available` those some encoding here fills.
  const bool rf_columns = any_rf || !readable, plain_columns = any_plain || !readable;
  std::vector<std::string> available;
  std::vector<bool> in_table;
  Table t;
  t.columns = {"encoding", "lag"};
  if (!a.layers.empty()) t.columns.insert(t.columns.begin(), "layer_type");
  for (const auto& c : plottable_kernel_columns()) {
    const bool rf = c.filled == KernelColumn::Filled::rf_rope, plain = c.filled == KernelColumn::Filled::plain_rope;
    in_table.push_back((!rf || rf_columns) && (!plain || plain_columns));
    if (in_table.back()) t.columns.push_back(c.name);
    if ((!rf || any_rf) && (!plain || any_plain)) available.push_back(c.name);
  }
  if (in_table.size() != 7) throw std::logic_error("run_encoding_kernel: a row holds 7 values, one per kernel column");
  // --columns: a row's cells by index into [encoding, lag, 7 values] (-2 encoding, -1 lag, else a value's index).
  std::vector<int> picked;
  if (!asked.empty()) {
    t.columns.resize(a.layers.empty() ? 0 : 1);
    const auto& names = kernel_column_names();
    for (const auto& c : asked) {
      picked.push_back(static_cast<int>(std::find(names.begin(), names.end(), c) - names.begin()) - 2);
      t.columns.push_back(c);
    }
  }
  const bool want_plain = asked.empty() || std::any_of(picked.begin(), picked.end(), [](int c) { return c >= 4; });

  // Rows go out block by block, so a lag where G overflows must be found before the first row (458,753 rows
  // reached stdout before the error at lag 515685 of alibi:slope=2.6e148, issue 20): every family's kernel and
  // content variance grow with |lag| or stay bounded, so the smallest and largest lags overflow first.
  std::optional<std::pair<double, double>> lag_range;  // the lags' extremes: the window notes
  std::optional<KernelPlot> plot;
  if (k == 1 && lag_count > 0) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, nearest = lo, lo_positive = lo;
    for (Eigen::Index n; (n = next_block()) > 0;) {
      const auto c = chunk.col(0).head(n);
      lo = std::min(lo, c.minCoeff());
      hi = std::max(hi, c.maxCoeff());
      nearest = std::min(nearest, c.cwiseAbs().minCoeff());
      for (Eigen::Index i = 0; i < n; ++i)
        if (c[i] > 0) lo_positive = std::min(lo_positive, c[i]);
    }
    rewind();
    Lags extremes(2, 1);
    extremes << lo, hi;
    for (std::size_t j = 0; j < encs.size(); ++j) (void)kernel_block(request, plan, j, extremes);
    lag_range = std::pair(lo, hi);
    // A plot shows the lags some layer type sees (a curve whose every lag is masked is left out of it).
    bool any_seen = false;
    for (std::size_t j = 0; j < encs.size(); ++j) any_seen = any_seen || !masked(j, nearest);
    if (!a.plot.empty() && !any_seen)
      throw_bad_value(where, "plot", a.plot, "given with lags some layer type sees (its window masks every lag here)");
    if (!a.plot.empty()) {
      // Default labels: a model's layer type as "<file name>: <layer type>", an encoding by its spelling (cut past
      // 160 characters; the legend wraps it inside the figure). Markers: each scheme's original context length and
      // each layer type's window, once per position.
      std::vector<std::string> labels;
      KernelPlotSpec spec = kernel_plot_spec(a.plot_options, where);
      auto mark = [&](double at, const std::string& label) {
        for (auto& m : spec.markers)
          if (m.at == at) {
            if (m.label.find(label) == std::string::npos) m.label += "; " + label;
            return;
          }
        spec.markers.push_back({at, label});
      };
      for (std::size_t j = 0; j < encs.size(); ++j) {
        const bool layer = !a.layers.empty() && !a.layers[j].brief.empty();
        labels.push_back(layer ? a.layers[j].brief : short_label(spelling(encs[j])));
        for (double L0 : scheme_original_contexts(encs[j])) mark(L0, "original context " + format_number(L0));
        if (layer && a.layers[j].span)
          mark(static_cast<double>(*a.layers[j].span), a.layers[j].window + " (" + a.layers[j].brief + ")");
      }
      plot.emplace(spec, std::move(labels), available, lo, hi, lo_positive, where);
    }
  }
  if (!a.plot.empty() && !plot) throw_bad_value(where, "lags", quote(plan.lag_text), "a lag to plot (--plot)");
  print_notes(command, encs);
  for (const auto& note : kernel_layer_notes(request, lag_range)) std::cerr << command << ": note: " << note << "\n";
  announce(command, fmt::format("{} lags of {} encoding(s)", lag_count, encs.size()),
           kernel_cost(plan, static_cast<double>(lag_count), held_rows).seconds);

  // The plot's panels as indices into a row's values (kernel, content variance, rf, plain columns).
  std::vector<std::size_t> panel_value;
  if (plot)
    for (const auto& c : plot->columns()) {
      const auto& all = plottable_kernel_columns();
      panel_value.push_back(static_cast<std::size_t>(
          std::find_if(all.begin(), all.end(), [&](const KernelColumn& k) { return k.name == c; }) - all.begin()));
    }
  TableStream streamed(a.out, format, t.columns);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t j = 0; j < encs.size(); ++j) {
    const Encoding& e = encs[j];
    const std::string name = spelling(e);
    const auto plain = plain_columns && want_plain ? plain_rope(e) : std::nullopt;
    const std::vector<double> plain_theta = plain ? plain->frequencies() : std::vector<double>{};  // once, not per lag
    rewind();
    for (Eigen::Index n; (n = next_block()) > 0;) {
      const Lags here = chunk.topRows(n);
      const auto kr = kernel_block(request, plan, j, here);
      // Plain RoPE's own columns for the block at once (vector sine sums; each lag on its own, as the kernel).
      std::vector<double> sres(plain ? n : 0), cont(sres.size()), csin(sres.size());
      if (plain)
        rope_kernel_columns(*plain, plain_theta, here.data(), static_cast<std::size_t>(n), sres.data(), cont.data(),
                            csin.data());
      for (Eigen::Index i = 0; i < n; ++i) {
        const KernelRow& r = kr[static_cast<std::size_t>(i)];
        const auto u = static_cast<std::size_t>(i);
        const Eigen::VectorXd lag = here.row(i).transpose();
        const std::span<const double> l(lag.data(), static_cast<std::size_t>(lag.size()));
        // Llama 4's query temperature: the score at query position p (default |lag|) is scaled by s(p).
        const double s_p = kernel_query_scale(request, j, lag[0]);
        const bool hidden = k == 1 && masked(j, lag[0]);
        // The row's values in plottable_kernel_columns' order; NaN where the family has none (an empty cell).
        const std::array<double, 7> v = {r.kernel * s_p,
                             r.content_variance * s_p * s_p,
                             r.expected_kernel,
                             r.frequency_variance,
                             plain ? sres[u] : nan,
                             plain ? cont[u] : nan,
                             plain ? csin[u] : nan};
        std::vector<Cell> row;
        row.reserve(t.columns.size());  // one allocation a row
        if (!a.layers.empty()) row.emplace_back(a.layers[j].label);
        if (!picked.empty()) {
          for (const int c : picked)
            if (c == -2) row.emplace_back(name);
            else if (c == -1) row.emplace_back(lag_cell(l));
            else row.push_back(hidden ? Cell() : number(v[static_cast<std::size_t>(c)]));
        } else {
          row.emplace_back(name);
          row.emplace_back(lag_cell(l));
          for (std::size_t c = 0; c < in_table.size(); ++c)
            if (in_table[c]) row.push_back(hidden ? Cell() : number(v[c]));  // a lag the layer cannot see: empty
        }
        t.add_row(std::move(row));
        if (plot)
          for (std::size_t c = 0; c < panel_value.size(); ++c) plot->add(j, c, lag[0], hidden ? nan : v[panel_value[c]]);
      }
      streamed.add(t);
      t.rows.clear();
    }
  }
  // The figure, written before the table lands (a failure leaves neither file; stdout rows are already out).
  if (plot) {
    const Figure fig = plot->finish();
    for (const auto& note : fig.notes) std::cerr << command << ": note: --plot: " << note << "\n";
    write_file_atomic(a.plot, fig.svg);
  }
  streamed.finish();
}

// ---------------------------------------------------------------------------------------------
// features --encoding

void run_encoding_features(const EncodingFeatureArgs& a) {
  const std::string command = "ropekit features";
  const Where where = Where::options(command);
  const Format format = parse_table_format_option(command, a.format, a.out);
  // The options bound to the library's request (commands/features_request.hpp), which checks them.
  FeaturesRequest request;
  request.command = command;
  request.encoding = a.encoding;
  request.lags_text = a.lags;
  request.format = a.format;
  const FeaturesPlan plan = plan_features(request);
  const Lags lags = feature_lags(request, plan);
  check_output_path(a.out);
  check_features_budget(request, plan, lags.rows());
  print_notes(command, {plan.encoding});
  announce(command, fmt::format("{} lags x {} columns of {}", lags.rows(), features_budget_columns(plan), a.encoding),
           features_cost(request, plan, static_cast<double>(lags.rows())).seconds);
  const Features f = feature_rows(request, plan, lags);
  Table t;
  t.columns = {"lag"};
  if (a.layer_type) t.columns.insert(t.columns.begin(), "layer_type");
  t.columns.insert(t.columns.end(), f.names.begin(), f.names.end());
  for (Eigen::Index i = 0; i < f.values.rows(); ++i) {
    const Eigen::VectorXd lag = lags.row(i).transpose();
    const std::span<const double> l(lag.data(), static_cast<std::size_t>(lag.size()));
    std::vector<Cell> row;
    if (a.layer_type) row.emplace_back(*a.layer_type);
    row.push_back(lag_cell(l));
    for (Eigen::Index j = 0; j < f.values.cols(); ++j) row.push_back(f.values(i, j));
    t.add_row(std::move(row));
  }
  emit(a.out, render(t, format));
}

namespace {

// ---------------------------------------------------------------------------------------------
// frequencies

struct FrequencyArgs {
  std::vector<std::string> models;
  std::string encoding, convention = "huggingface", format, out;
  std::optional<double> seq_len;
  bool float32 = false;
};

void run_frequencies(const FrequencyArgs& a) {
  const std::string command = "ropekit frequencies";
  const Where where = Where::options(command);
  const Format format = parse_table_format_option(command, a.format, a.out);
  // The options bound to the library's request (commands/frequencies_request.hpp), which checks them.
  FrequenciesRequest request;
  request.command = command;
  request.encoding = a.encoding;
  request.seq_len = a.seq_len;
  request.float32 = a.float32;
  request.convention = a.convention;
  request.format = a.format;
  const FrequenciesPlan plan = plan_frequencies(request);
  const bool sum = plan.sum;
  const int k = plan.k;
  check_output_path(a.out);
  check_frequencies_budget(request, plan);
  const double rows = frequencies_budget_rows(plan);
  print_notes(command, {plan.encoding});
  announce(command, fmt::format("{} frequencies of {}", rows, a.encoding), frequencies_cost(request, plan, rows).seconds);

  Table t;
  if (sum) t.columns.push_back("part");
  t.columns.push_back("i");
  auto axis_names = [&](const std::string& stem) {
    if (k == 1) {
      t.columns.push_back(stem);
      return;
    }
    for (int j = 0; j < k; ++j) t.columns.push_back(fmt::format("{}_{}", stem, j));
  };
  axis_names("theta");
  t.columns.push_back("wavelength");
  t.columns.push_back("attention_factor");
  if (a.float32) axis_names("theta_float32");
  const FrequencyRows f = frequency_rows(request, plan);
  for (std::size_t i = 0; i < f.index.size(); ++i) {
    std::vector<Cell> row;
    if (sum) row.push_back(f.part[i]);
    row.push_back(f.index[i]);
    for (int j = 0; j < k; ++j) row.push_back(f.theta[static_cast<std::size_t>(j)][i]);
    row.push_back(f.wavelength[i]);
    row.push_back(f.attention_factor[i]);
    if (a.float32)
      for (int j = 0; j < k; ++j) row.push_back(f.theta32[static_cast<std::size_t>(j)][i]);
    t.add_row(std::move(row));
  }
  emit(a.out, render(t, format));
}

// ---------------------------------------------------------------------------------------------
// check

struct CheckArgs {
  std::vector<std::string> encodings, models;
  /// Given --model: per encoding, its layer type (ModelLayer{} for an --encoding): the layer_type column, the window
  /// lags it sees and its query temperature (check_request.hpp applies them).
  std::vector<ModelLayer> layers;
  std::string window, format = "csv", out;
  std::optional<double> seq_len;
};

void run_check(const CheckArgs& a) {
  const std::string command = "ropekit check";
  const Format format = parse_format_option(command, a.format);
  // The options bound to the library's request (commands/check_request.hpp), which checks them.
  CheckRequest request;
  request.command = command;
  request.encodings = a.encodings;
  request.window_text = a.window;
  request.seq_len = a.seq_len;
  request.layers = a.layers;
  const CheckPlan plan = plan_check(request);
  check_output_path(a.out);
  const double seconds = check_check_budget(request, plan);
  print_notes(command, plan.encodings);
  for (const auto& note : plan.notes) std::cerr << command << ": note: " << note << "\n";
  announce(command, fmt::format("{} encoding(s) over their windows", plan.encodings.size()), seconds);

  const std::vector<CheckRow> rows = check_rows(request, plan);
  Table t;
  t.columns = {"encoding", "quantity", "lag", "value"};
  if (!a.layers.empty()) t.columns.insert(t.columns.begin(), "layer_type");
  for (const CheckRow& r : rows) {
    std::vector<Cell> row = {r.encoding, r.quantity, r.lag ? Cell(*r.lag) : Cell(),
                             std::holds_alternative<bool>(r.value) ? Cell(std::get<bool>(r.value))
                                                                   : Cell(std::get<double>(r.value))};
    if (!a.layers.empty()) row.insert(row.begin(), r.layer_type.empty() ? Cell() : Cell(r.layer_type));
    t.add_row(std::move(row));
  }
  emit(a.out, render(t, format));
}

}  // namespace

void add_encoding_commands(CLI::App& app, const CliContext&) {
  {
    auto a = std::make_shared<FrequencyArgs>();
    const std::string cmd = "ropekit frequencies";
    auto* c = app.add_subcommand("frequencies", "Print an encoding's rotary frequencies theta_i, wavelengths 2 pi / theta_i "
                                                "(inf for theta_i = 0) and attention factor (optionally as float32 "
                                                "frameworks get them)");
    auto* enc = c->add_option("--encoding", a->encoding, "encoding spelling, e.g. rope:dim=128,base=1e4,scaling=yarn("
                                                         "factor=16,orig=4096) (see `ropekit list encodings`)");
    add_model_option(c, a->models, false)->excludes(enc);
    add_real_option(c, cmd, "--seq-len", a->seq_len,
                    "current sequence length T (dynamic NTK needs it; longrope: long factors when T > orig, else short)");
    c->add_flag("--float32", a->float32, "add theta_float32: the values a framework computing in float32 gets");
    c->add_option("--convention", a->convention, "huggingface or ggml (llama.cpp; differs for yarn only)")
        ->capture_default_str();
    c->add_option("--format", a->format, kTableFormatHelp);
    c->add_option("--out", a->out, "output file (default: stdout); written only if the run succeeds");
    c->callback([a] {
      take_model_encoding("ropekit frequencies", a->models, a->encoding);
      if (a->encoding.empty()) throw InputError("ropekit frequencies: --encoding = none (must be given, or --model)");
      run_frequencies(*a);
    });
  }
  {
    auto a = std::make_shared<CheckArgs>();
    const std::string cmd = "ropekit check";
    auto* c = app.add_subcommand("check", "Report an encoding's exactness over a window of lags (group law, orthogonality, "
                                          "reversibility; sinusoidal: relativity), its verdicts and RoFormer's long-term "
                                          "decay bound; exits 0 whatever it finds");
    c->add_option("--encoding", a->encodings, "one or more encoding spellings (or repeat --encoding)");
    auto* model = add_model_option(c, a->models, true);
    model->description(model->get_description() +
                       "; rows then start with a layer_type column, and a layer type with a window is checked on the "
                       "window lags it sees (a note names those left out)");
    c->add_option("--window", a->window,
                  "lags s, t of the checks (default 0,1,2,5,10,50,100,1000 plus 2 orig for schemes with an original "
                  "context); 1-D, along the first axis of k-D encodings");
    add_real_option(c, cmd, "--seq-len", a->seq_len,
                    "evaluate every G at this sequence length (default: T = |Dp| + 1 at each lag)");
    c->add_option("--format", a->format, "csv, md, json or latex")->capture_default_str();
    c->add_option("--out", a->out, "output file (default: stdout); written only if the run succeeds");
    c->callback([a] {
      const auto layers = model_layers("ropekit check", a->models, true);
      if (!layers.empty()) a->layers.assign(a->encodings.size(), ModelLayer{});
      for (const auto& l : layers) {
        // Each (encoding, query temperature, window) once; their rows carry the layer types' labels.
        a->encodings.push_back(l.encoding);
        a->layers.push_back(l);
      }
      if (a->encodings.empty()) throw InputError("ropekit check: --encoding = none (must be given, or --model)");
      run_check(*a);
    });
  }
}

}  // namespace ropekit
