#pragma once
// Target relative kernels y(d) of the Jordan-RoPE basis probes (spec fixed-basis.md section 3):
// phase, linear and mixed (paper Table 3), the structured probes (Tables 4, 11) and the
// frequency jets x^r cos(omega d), x^r e^{-c x} cos(omega d) (Tables 6, 16), any r >= 1.
// omega = theta^(-2 idx/h), omega2 = theta^(-2 idx2/h), x = d/L.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"

namespace ropekit {

namespace target {
struct Phase { std::optional<int> idx; };                                     ///< cos(omega d)
struct Linear {};                                                             ///< -d/L
struct Mixed { std::optional<int> idx; };                                     ///< x cos(omega d)
struct PhaseDrift { std::optional<int> idx; std::optional<double> eps; };     ///< cos(omega (1+eps) d)
struct SeasonalTrend { std::optional<int> idx; };  ///< (0.35 + 0.9x) cos(omega d) + 0.25 sin(omega d)
struct DampedWave { std::optional<int> idx; std::optional<double> gamma; };  ///< e^{-gamma d}(cos + 0.75 x sin)
struct RhythmEnvelope {  ///< (0.25 + 0.85x)(0.65 cos(omega d) + 0.35 sin(omega2 d))
  std::optional<int> idx;
  std::optional<int> idx2;
};
struct MotifSpacing { std::optional<int> idx2; };  ///< (x/(1 + 0.25x))(0.7 cos(omega2 d) - 0.3 sin(omega2 d))
struct HighJet { int r = 1; std::optional<int> idx; };                        ///< x^r cos(omega d), r >= 1
struct ScaledHighJet {                                                        ///< x^r e^{-c x} cos(omega d)
  int r = 1;
  std::optional<double> c;
  std::optional<int> idx;
};
}  // namespace target

using Target = std::variant<target::Phase, target::Linear, target::Mixed, target::PhaseDrift, target::SeasonalTrend,
                            target::DampedWave, target::RhythmEnvelope, target::MotifSpacing, target::HighJet,
                            target::ScaledHighJet>;

/// Run parameters of the targets; a target's own override (e.g. `phase:idx=5`) wins.
struct TargetParams {
  double base = 1e4;                      ///< RoPE base B (config key position.theta), finite, > 0
  int head_dim = 64;                      ///< positive, even
  int train_context = 1024;               ///< L >= 1
  double gamma = 1e-4;                    ///< damped_wave's damping, finite, >= 0
  std::optional<int> freq_index;          ///< idx >= 0 (target_freq_index)
  std::optional<int> second_freq_index;   ///< idx2 >= 0 (second_freq_index)
  double scaled_c = 0.1;                  ///< c of scaled_high_jet, finite, >= 0
  double drift_eps = 5e-5;                ///< drift_relative_eps, finite

  /// @throws InputError naming the first broken constraint, spelled by `where` (config keys:
  /// target_freq_index, second_freq_index, scaled_c, drift_relative_eps, theta, head_dim, train_context, gamma).
  void validate(const Where& where = Where("target parameters")) const;
};

/// Parses a reference name (`scaled_high_jet_r2`) or a readable spelling (`scaled-high-jet:r=2,c=0.1`).
/// @throws InputError for an unknown name, listing the known ones, or a bad parameter.
Target parse_target(std::string_view name);

/// y(d) at each lag. @throws InputError if a frequency index the target needs is missing, a lag is not finite,
/// or a value would leave float64 (see check_target_range). x^r e^{-c x} is formed in logarithms where
/// e^{-c x} underflows, so it is 0 only where the product itself underflows.
Eigen::VectorXd target_values(const Target& target, const TargetParams& params, const Eigen::VectorXd& lags);

/// Checks that params hold everything `target` needs (e.g. second_freq_index for motif_spacing).
void check_target_params(const Target& target, const TargetParams& params, std::string_view name);

/// Checks that y(d) stays finite in float64 for every lag d in [0, max_lag]: x^r (high_jet: x^r <= DBL_MAX,
/// i.e. d <= L DBL_MAX^(1/r)) and the phases omega (1 + eps) d. @throws InputError naming the target `name`,
/// the parameter and the bound.
void check_target_range(const Target& target, const TargetParams& params, double max_lag, std::string_view name);

/// Default target lists of the reference's runs: toy (Table 3) and structured (Tables 4, 6, 11).
const std::vector<std::string>& toy_targets();
const std::vector<std::string>& structured_targets();

/// One line per family for `ropekit list targets`: {spellings, formula}.
const std::vector<std::pair<std::string, std::string>>& target_families();

}  // namespace ropekit
