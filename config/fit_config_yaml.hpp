#pragma once
// A fixed-basis probe run, read from the reference's YAML schema (spec fixed-basis.md section 5):
// top-level seeds, methods (+ ablation_methods, toy_extra_methods), position {theta, gamma_min,
// bounded_tau}, and one section, `toy:` (Table 3) or `benchmarks:` (Tables 4, 6, 11, 16); and ropekit's own
// top-level `encodings:`, a list of encoding spellings (encoding.hpp) fitted beside the methods.
// Other sections (retrieval, lm, model, device, ...) are ignored.

#include <string>
#include <string_view>

#include "ropekit/fit/fit_run.hpp"

namespace ropekit {

/// @throws InputError for malformed YAML (with line and column), a key given twice in one mapping (yaml-cpp
///         keeps the first, PyYAML the last: refused, naming both lines), a missing section or key, or a bad value.
FitConfig parse_fit_config(std::string_view yaml_text, std::string_view source, const ConfigOverrides& overrides = {});
FitConfig load_fit_config(const std::string& path, const ConfigOverrides& overrides = {});

}  // namespace ropekit
