#pragma once
// Built-in probes: named, self-contained runs that regenerate a paper's table or check a theorem,
// writing Markdown reports (and their data) into an output directory.

#include <functional>
#include <string>
#include <vector>

namespace ropekit {

struct ProbeContext {
  std::string out_dir = "reports/out";  ///< where the reports go (created if missing)
  std::string command;                  ///< the exact command line, recorded in every report
  std::string rows_csv;                 ///< optional: render from these rows instead of computing (fixed-basis probes)
};

struct ProbeResult {
  std::vector<std::string> files;  ///< paths written
  std::string summary;             ///< one or two lines for the terminal
};

struct ProbeInfo {
  std::string name;
  std::string description;
  std::function<ProbeResult(const ProbeContext&)> run;
  double typical_seconds = 0;  ///< run time on a slow (AVX2, 2-core) machine; >= 2 s are announced on stderr
};

/// Every built-in probe, in the order `ropekit probe --all` runs them.
const std::vector<ProbeInfo>& builtin_probes();

/// @throws InputError for an unknown name, listing the known ones.
const ProbeInfo& find_probe(const std::string& name);

/// First lines of every report: title, ropekit version, the exact command, then `details`.
std::string report_header(const std::string& title, const std::string& command, const std::string& details);

}  // namespace ropekit
