#pragma once
// `ropekit report FILE...` and ropekit.report: the models report of the user's model files as one page, Markdown
// (plots as SVG files it links) or a self-contained HTML page (plots inline, no external resource, no script):
// a side-by-side table (one column per file), the summary and kernels tables of `ropekit probe models`
// (reports/model_tables.hpp), precision's first positions past the tolerances in each file's dtype, one kernel plot
// per file and the framework notes.

#include <string>
#include <utility>
#include <vector>

#include "ropekit/commands/model_report.hpp"

namespace ropekit {

struct ReportPageOptions {
  bool html = false;
  /// Markdown: the SVGs' names "<svg_stem>-<k>.svg" (k = the file's position, from 1), linked from the page and
  /// returned beside it; "" writes no plot (the page says how to get them). HTML inlines them whatever this is.
  std::string svg_stem;
  std::string command;  ///< recorded in the header ("": none)
};

struct ReportPage {
  std::string text;
  /// The plots: (name, SVG text), one per file with a rotary layer type; Markdown links them by name.
  std::vector<std::pair<std::string, std::string>> svgs;
};

ReportPage render_report_page(const std::vector<FileReport>& files, const ReportPageOptions& o);

}  // namespace ropekit
