#pragma once
// A fixed-basis probe run, read from the reference's YAML schema (spec fixed-basis.md section 5):
// top-level seeds, methods (+ ablation_methods, toy_extra_methods), position {theta, gamma_min,
// bounded_tau}, and one section, `toy:` (Table 3) or `benchmarks:` (Tables 4, 6, 11, 16).
// Other sections (retrieval, lm, model, device, ...) are ignored.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/encodings/basis.hpp"
#include "ropekit/core/budget.hpp"
#include "targets/target.hpp"

namespace ropekit {

struct FitConfig {
  std::string source;                ///< where it was read from, for messages and report headers
  std::string section;               ///< "toy" or "benchmarks"
  std::vector<std::int64_t> seeds;   ///< at least one; only used to draw training lags when train_points < L
  std::vector<std::string> methods;  ///< names as written (reference or readable spellings)
  std::vector<std::string> targets;  ///< default: toy -> phase, linear, mixed; benchmarks -> structured list
  BasisParams basis;
  TargetParams target;
  int train_points = 0;              ///< 1..L training lags drawn from 0..L-1 (all of them when = L)
  std::vector<int> eval_contexts;    ///< each >= 1: score lags 0..T-1
  double ridge = 1e-4;               ///< finite, >= 0

  /// Checks every constraint, that every method and target name parses and has what it needs, that every
  /// target is finite in float64 on lags 0..max_length()-1, and that the run fits the memory and time
  /// budgets (cost()). @throws InputError naming the source, the key, the value and the constraint.
  void validate() const;

  /// max(train_context, eval_contexts): the lags 0..max_length()-1 are computed.
  int max_length() const;
  /// Estimated memory and run time of run_fixed_basis (budget.hpp): the trigonometric tables and targets
  /// on every lag, per concurrent method the training matrix, the ridge system (p x p, several copies)
  /// and the predictions; time 2 L p^2 + 8 p^3 flops per method and training set, plus the predictions.
  /// Valid for sizes that pass the other checks.
  Cost cost() const;
};

struct ConfigOverrides {
  std::optional<std::vector<std::string>> methods;  ///< replaces the config's methods
  std::optional<std::vector<std::string>> targets;  ///< replaces the default targets
  std::optional<std::string> section;               ///< "toy" or "benchmarks" when a file has both
};

/// @throws InputError for malformed YAML (with line and column), a key given twice in one mapping (yaml-cpp
///         keeps the first, PyYAML the last: refused, naming both lines), a missing section or key, or a bad value.
FitConfig parse_fit_config(std::string_view yaml_text, std::string_view source, const ConfigOverrides& overrides = {});
FitConfig load_fit_config(const std::string& path, const ConfigOverrides& overrides = {});

}  // namespace ropekit

namespace ropekit {
/// The run's parameters in one Markdown list, for report headers.
std::string describe(const FitConfig& config);
}  // namespace ropekit
