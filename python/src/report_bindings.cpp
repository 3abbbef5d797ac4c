// ropekit.report: the models report of model files (as `ropekit report FILE...`): the page's text and its plots.
#include "bindings.hpp"

#include <optional>
#include <string>
#include <vector>

#include "reports/model_page.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/commands/model_report.hpp"

namespace ropekit::bindings {

py::tuple py_report(const py::object& files, const std::string& format, const std::optional<std::string>& svg_stem,
                    const std::optional<std::vector<double>>& tolerances) {
  const std::string command = "ropekit.report";
  ReportRequest r;
  r.command = command;
  r.files_name = "files";
  r.files = to_strings(files, command, "files");
  r.tolerances_name = "tolerances";
  if (tolerances) r.tolerances = *tolerances;
  if (format != "md" && format != "markdown" && format != "html")
    bad(command, "format", "'" + format + "'", "md or html");
  if (svg_stem && (svg_stem->empty() || svg_stem->find('/') != std::string::npos))
    bad(command, "svg_stem", "'" + *svg_stem + "'", "None or a file name stem without '/'");
  ReportPageOptions o;
  o.html = format == "html";
  o.svg_stem = svg_stem.value_or("");
  const ReportPage page = interruptible([&] { return render_report_page(report_files(r), o); });
  py::dict svgs;
  for (const auto& [name, svg] : page.svgs) svgs[py::str(name)] = svg;
  return py::make_tuple(page.text, svgs);
}

}  // namespace ropekit::bindings
