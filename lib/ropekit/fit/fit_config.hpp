#pragma once
// The parameters of a fixed-basis run (fit_run.hpp): FitConfig, read from YAML by config/fit_config_yaml.hpp or
// built from options (FitOptions: `ropekit fit --encoding`, `ropekit.fit`), its checks, budget and description.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ropekit/core/budget.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/basis.hpp"
#include "targets/target.hpp"

namespace ropekit {

struct FitConfig {
  /// Longest lag grid: any int. Evaluation is streamed in windows of 512 lags (only the training design of L lags
  /// is held), so memory does not grow with the evaluation length and time grows linearly; cost() refuses runs over
  /// the time budget.
  static constexpr int kMaxLength = std::numeric_limits<int>::max();
  /// predict() holds every lag's prediction (for plots): at most 2^22 lags.
  static constexpr int kMaxPredictLength = 1 << 22;

  std::string source;                ///< where it was read from, for messages and report headers
  std::string section;               ///< "toy" or "benchmarks"
  std::vector<std::int64_t> seeds;   ///< at least one; only used to draw training lags when train_points < L
  std::vector<std::string> methods;  ///< names as written (reference or readable spellings)
  /// Encoding spellings as written (encoding.hpp), read with encoding_defaults(): `rope` here is the method
  /// `rope` of the same run. Fitted after the methods; their rows carry the spelling in the `method` column.
  std::vector<std::string> encodings;
  std::vector<std::string> targets;  ///< default: toy -> phase, linear, mixed; benchmarks -> structured list
  BasisParams basis;
  TargetParams target;
  int train_points = 0;              ///< 1..L training lags drawn from 0..L-1 (all of them when = L)
  std::vector<int> eval_contexts;    ///< each >= 1: score lags 0..T-1
  double ridge = 1e-4;               ///< finite, >= 0
  /// Built from `ropekit fit` options rather than a file: messages then name the options (source is the
  /// command, "ropekit fit") instead of config keys.
  bool command_line = false;
  /// How messages name the encodings list: `encodings` (a config key: encodings[i]) or the option `--encoding`.
  std::string encodings_key = "encodings";

  /// The run's values for what an encoding's spelling leaves unset: dim = head_dim, base = theta,
  /// count = num_freqs, gamma, L = train_context, bounded_tau.
  EncodingDefaults encoding_defaults() const;

  /// Checks every constraint, that every method, encoding and target name parses and has what it needs (an
  /// encoding: 1-D relative lags, finite columns on lags 0..max_length()-1), that every target is finite in
  /// float64 on lags 0..max_length()-1, and that the run fits the memory and time budgets (cost()).
  /// @throws InputError naming the source, the key (encodings[i], or the option), the value and the constraint.
  void validate() const;

  /// max(train_context, eval_contexts): the lags 0..max_length()-1 are computed.
  int max_length() const;
  /// Estimated memory and run time of run_fixed_basis (budget.hpp): the trigonometric tables and targets
  /// on every lag, per concurrent method the training matrix, the ridge system (p x p, several copies)
  /// and the predictions; time 2 L p^2 + 8 p^3 flops per method and training set, plus the predictions.
  /// An encoding counts as a method of n_features(encoding) columns that also holds its own trigonometric
  /// table and feature matrix of the training lags and evaluates its angles on every lag.
  /// Valid for sizes that pass the other checks.
  Cost cost() const;

  /// Where messages say the run came from: "config <source>", or the command ("ropekit fit") for a run built
  /// from options.
  std::string where() const;
  /// How messages name encodings[i]: "encodings[i]", or the option ("--encoding") alone.
  std::string encoding_key(std::size_t i) const;
};

struct ConfigOverrides {
  std::optional<std::vector<std::string>> methods;  ///< replaces the config's methods
  std::optional<std::vector<std::string>> encodings;  ///< replaces the config's encodings (`fit --encoding`)
  std::optional<std::vector<std::string>> targets;  ///< replaces the default targets
  std::optional<std::string> section;               ///< "toy" or "benchmarks" when a file has both
};

/// A run given by options instead of a config file (`ropekit fit --encoding ...`, `ropekit.fit`): the paper
/// configs' defaults for what is not given (section "toy", targets phase, linear, mixed, every training lag), and
/// the targets' frequency parameters taken from the basis. Messages name `encodings_key` ("--encoding") and the
/// options. @throws InputError from FitConfig::validate().
struct FitOptions {
  std::vector<std::string> methods, encodings, targets;
  BasisParams basis;                          ///< its train_context is L, the training lags 0..L-1
  std::vector<int> eval_contexts;
  std::vector<std::int64_t> seeds = {0};
  double ridge = 1e-4;
  std::optional<int> freq_index, second_freq_index;
  std::optional<std::string> tau;  ///< "bounded" or "raw": sets basis.bounded_tau (unset: the basis' own)
  int threads = 0;                 ///< worker threads of the run, >= 0 (0: all cores)
  std::string encodings_key = "--encoding";

  /// The options' own ranges, as the command line's option parser states them: at least one encoding or method,
  /// basis.train_context and each eval_contexts in [1, FitConfig::kMaxLength], each seed >= 0, tau bounded or
  /// raw, threads >= 0. @throws InputError naming the option
  /// ("ropekit fit: --train-context = 0 (must be an integer in [1, 2147483647])").
  void validate() const;
};
/// The run of `options` (validated first). @throws InputError from FitOptions::validate() or FitConfig::validate().
FitConfig fit_config(const FitOptions& options);

/// The run's parameters in one Markdown list, for report headers.
std::string describe(const FitConfig& config);

/// Parses config.encodings[i] with config.encoding_defaults() and checks what costs nothing to check: 1-D lags,
/// relative, a feature count (validate() then sizes the run and evaluates each encoding at the last lag).
/// @throws InputError naming the key (`config c.yaml: encodings[1]: encoding 'rope:dim=63': dim = 63 (...)`,
/// `ropekit fit: --encoding = 'nd:...' (must be an encoding of 1-D lags ...)`), the spelling and what is wrong.
Encoding fit_encoding(const FitConfig& config, std::size_t i);

}  // namespace ropekit
