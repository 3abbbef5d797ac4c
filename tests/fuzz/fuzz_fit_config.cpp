// Fuzz harness: YAML run configs (parse_fit_config, what `ropekit fit --config` reads), then what a run does
// first: describe the config, count each method's columns, and evaluate features and targets at lags 0..3
// with the config's parameters (frequencies capped at 4 so an iteration stays fast).

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "config/fit_config_yaml.hpp"
#include "ropekit/encodings/basis.hpp"
#include "ropekit/encodings/method.hpp"
#include "targets/target.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    const FitConfig c = parse_fit_config(fuzz::as_text(data, size), "fuzz.yaml");
    fuzz::require(!c.seeds.empty() && !c.methods.empty() && !c.targets.empty() && !c.eval_contexts.empty() &&
                      (c.section == "toy" || c.section == "benchmarks"),
                  "parse_fit_config returned an incomplete config");
    describe(c);
    Eigen::VectorXd lags(4);
    lags << 0, 1, 2, 3;
    BasisParams small = c.basis;
    small.num_freqs = std::min(small.num_freqs, 4);
    for (const auto& name : c.methods) {
      const Method m = fuzz::must("parse_method of a validated config's method", [&] { return parse_method(name); });
      fuzz::require(n_features(m, c.basis) >= 1, fmt::format("method '{}': n_features < 1", name));
      const Eigen::MatrixXd X = features(m, small, lags);
      fuzz::require(X.allFinite(), fmt::format("method '{}': non-finite features", name));
    }
    for (const auto& name : c.targets) {
      const Target t = fuzz::must("parse_target of a validated config's target", [&] { return parse_target(name); });
      const Eigen::VectorXd y = target_values(t, c.target, lags);
      fuzz::require(y.allFinite(), fmt::format("target '{}': y = {}", name, fmt::join(y, ", ")));
    }
  });
}
