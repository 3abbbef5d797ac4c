// ropekit report FILE...: the models report (`ropekit probe models`) of the user's own model files, Markdown or one
// self-contained HTML page (lib/ropekit/commands/model_report.hpp computes, reports/model_page.hpp renders).
#include <filesystem>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "reports/model_page.hpp"
#include "reports/output.hpp"
#include "reports/progress.hpp"
#include "ropekit/commands/model_report.hpp"

namespace ropekit {

namespace {

struct ReportArgs {
  std::vector<std::string> files;
  std::string format = "md", out;
  std::vector<double> tolerances = {1e-3, 1e-2};
  bool no_plots = false;
};

void run_report(const ReportArgs& a, const CliContext& ctx) {
  const std::string command = "ropekit report";
  bool html = false;
  if (a.format == "html") html = true;
  else if (a.format != "md" && a.format != "markdown")
    throw_bad_value(Where(command), "--format", "'" + a.format + "'", "md or html");
  const bool to_stdout = a.out.empty() || a.out == "-";
  check_output_path(a.out);
  // Markdown's plots land beside --out as <stem>-<k>.svg; none on stdout or with --no-plots.
  const std::filesystem::path out(a.out);
  const std::string stem = html || to_stdout || a.no_plots ? "" : out.stem().string();
  if (!stem.empty())
    for (std::size_t k = 1; k <= a.files.size(); ++k)
      check_output_path((out.parent_path() / fmt::format("{}-{}.svg", stem, k)).string());
  ReportRequest r;
  r.command = command;
  r.files = a.files;
  r.tolerances = a.tolerances;
  r.announce = [&](const std::string& what, double seconds) { announce(command, what, seconds); };
  const auto files = report_files(r);
  ReportPageOptions o;
  o.html = html;
  o.svg_stem = stem;
  o.command = ctx.command;
  const ReportPage page = render_report_page(files, o);
  OutputBatch batch;  // the page and its plots land together (a failed write leaves none)
  for (const auto& [name, svg] : page.svgs) write_file_atomic((out.parent_path() / name).string(), svg);
  emit(a.out, page.text);
  batch.commit();
}

}  // namespace

void add_report_command(CLI::App& app, const CliContext& ctx) {
  auto a = std::make_shared<ReportArgs>();
  auto* c = app.add_subcommand(
      "report", "The models report of your own model files (config.json, GGUF, or a folder holding a config.json; "
                "several to compare): per layer type the kernel over the visible lags, wavelength coverage, Men et "
                "al.'s base bound, precision's first positions past 1e-3 and 1e-2 in the file's dtype, framework "
                "notes, one kernel plot per file and a side-by-side table");
  c->add_option("files", a->files, "model files: config.json, .gguf, or a folder holding a config.json");
  c->add_option("--format", a->format,
                "md (Markdown; its plots are SVG files <stem>-<k>.svg beside --out, none on stdout) or html (one "
                "self-contained page, the plots inline: no external resource, no script)")
      ->capture_default_str();
  c->add_option("--out", a->out, "output file (default: stdout); it and its plots are written only if the run succeeds");
  c->add_option("--tolerance", a->tolerances,
                "precision: the phase errors (rad) whose first positions the report finds, each finite and > 0")
      ->capture_default_str();
  c->add_flag("--no-plots", a->no_plots, "Markdown: write no SVG files beside --out");
  c->callback([a, ctx] { run_report(*a, ctx); });
}

}  // namespace ropekit
