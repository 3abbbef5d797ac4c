#include "ropekit/commands/tune_request.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/kernel_cost.hpp"
#include "targets/kernel_table.hpp"
#include "targets/target.hpp"

namespace ropekit {

namespace {

// What a spelling leaves unset (the encoding to tune and kernel: targets): the run's options, as `fit` does.
EncodingDefaults encoding_defaults(const TuneRequest& a) {
  EncodingDefaults d;
  d.dim = a.head_dim;
  d.base = a.theta;
  d.count = a.num_freqs;
  d.gamma = a.gamma;
  d.L = a.train_context;
  return d;
}

TuneTarget resolve_target(const std::string& name, const TuneRequest& a, int max_length) {
  const Where where = Where::options(a.command);
  TuneTarget r{name, {}, {}, 0};
  auto grid = [&] { return Eigen::VectorXd::LinSpaced(max_length, 0, max_length - 1); };
  if (name.rfind("data:", 0) == 0) {
    const auto table = read_kernel_table(name.substr(5), a.command + ": --target");
    r.lags = table.lag;
    r.y = table.value;
    return r;
  }
  if (name.rfind("kernel:", 0) == 0) {
    const Encoding e = parse_encoding(name.substr(7), Where(a.command + ": --target"), encoding_defaults(a));
    if (lag_dims(e) != 1 || !is_relative(e))
      throw_bad_value(where, "target", "'" + name + "'", "the kernel of a relative encoding of 1-D lags");
    // The kernel on max_length lags, sized before it runs (issue 20 item 11: it had no budget).
    check_encoding_blocks(where, "target", name, e);
    const EncodingKernelCost costs = encoding_kernel_cost(e);
    const Cost cost = costs.at(max_length);
    if (!cost.fits())
      throw_bad_value(where, "target", fmt::format("'{}' ({} lags)", name, max_length),
                      fmt::format("a kernel target whose lags fit the budget: it {}; at most {} lags (the largest of "
                                  "--train-context and --eval-contexts) fit",
                                  cost.excess(), largest_fitting(1, max_length, [&](std::int64_t m) {
                                    return costs.at(static_cast<double>(m)).fits();
                                  })));
    r.lags = grid();
    r.y = kernel(e, Lags(r.lags));
    return r;
  }
  const Target target = parse_target(name);
  TargetParams p;
  p.base = a.theta;
  p.head_dim = a.head_dim;
  p.train_context = a.train_context;
  p.gamma = a.gamma;
  p.freq_index = a.freq_index;
  p.second_freq_index = a.second_freq_index;
  p.validate(where);
  check_target_params(target, p, name);
  check_target_range(target, p, max_length - 1, name);
  r.lags = grid();
  r.y = target_values(target, p, r.lags);
  return r;
}

}  // namespace

TuneOptions tune_options(const TuneRequest& a) {
  TuneOptions o;
  o.ridge = a.ridge;
  o.starts = a.starts;
  o.seed = a.seed;
  o.max_iterations = a.max_iterations;
  return o;
}

TunePlan plan_tuning(const TuneRequest& a) {
  const std::string& command = a.command;
  const Where where = Where::options(command);
  if (a.free.empty()) throw InputError(command + ": --free = none (must be the parameters to tune, e.g. theta)");
  if (!(a.ridge > 0) || !std::isfinite(a.ridge))
    throw_bad_value(where, "ridge", format_number(a.ridge),
                    "a finite number > 0: the projected problem needs [X; sqrt(ridge) I] of full rank");
  check_in_range(where, "train_context", a.train_context, 1, 1 << 20);
  check_in_range(where, "starts", a.starts, 1, 1000);
  check_in_range(where, "max_iterations", a.max_iterations, 1, 100000);
  for (int T : a.eval_contexts) check_in_range(where, "eval_contexts", T, 1, 1 << 20);
  TunePlan plan;
  plan.max_length = a.train_context;
  for (int T : a.eval_contexts) plan.max_length = std::max(plan.max_length, T);
  const std::vector<std::string> targets = a.targets.empty() ? toy_targets() : a.targets;

  plan.encoding = parse_encoding(a.encoding, Where(command + ": --encoding"), encoding_defaults(a));
  if (lag_dims(plan.encoding) != 1 || !is_relative(plan.encoding))
    throw_bad_value(where, "encoding", "'" + a.encoding + "'", "a relative encoding of 1-D lags");
  plan.tunable = make_tunable(plan.encoding, a.free, where);
  for (const auto& name : targets) plan.targets.push_back(resolve_target(name, a, plan.max_length));
  for (auto& r : plan.targets) {
    if (r.lags.size() == 0 || r.lags[0] >= a.train_context)
      throw_bad_value(where, "target", "'" + r.name + "'",
                      fmt::format("a target with lags below --train-context {}", a.train_context));
    if (!r.y.allFinite()) throw_bad_value(where, "target", "'" + r.name + "'", "finite values");
    while (r.n_train < r.lags.size() && r.lags[r.n_train] < a.train_context) ++r.n_train;
  }

  // Memory and time up front (budget.hpp): every evaluation of the projected residual factorises the
  // (N + n) x n system and builds its Jacobian (a dual pass per shared parameter, one for all frequencies);
  // each start takes at most --max-iterations evaluations; scoring holds the features on every lag.
  const TunableEncoding& tunable = plan.tunable;
  const double N = a.train_context, n = tunable.n_features(), P = tunable.n_params();
  const double passes = 2 + (P - (tunable.freq_map == TunableEncoding::FreqMap::each ? tunable.theta.size() : 0));
  const double per_eval = (2 * (N + n) * n * n + 4 * (N + n) * n * std::min(P, n + 1)) / kFlopsPerSecond +
                          passes * N * n * 4 / kElementsPerSecond;
  Cost& cost = plan.cost;
  cost.bytes = 8 * ((N + n) * n * 6 + 3.0 * plan.max_length * (n + 2));
  // A one-parameter scan adds its grid and the refinement of its best minima (param_fit.hpp tuning_scans).
  const double scan = tuning_scans(tunable) ? kScanPoints + kScanRefined * (a.max_iterations + 1.0) : 0.0;
  cost.seconds = static_cast<double>(targets.size()) * (a.starts * (a.max_iterations + 1) + scan) * per_eval +
                 2 * plan.max_length * n * n / kFlopsPerSecond;
  if (!cost.fits())
    throw InputError(fmt::format("{}: --encoding = '{}' ({} features, {} free parameters) with --train-context {}, "
                                 "{} targets, --starts {}, --max-iterations {} (must fit the budget: it {}; reduce "
                                 "them)", command, a.encoding, n, P, a.train_context, targets.size(), a.starts,
                                 a.max_iterations, cost.excess()));
  return plan;
}

TunedTarget tune_target(const TuneRequest& a, const TunePlan& plan, std::size_t i, const TuneOptions& options) {
  const TuneTarget& t = plan.targets[i];
  TunedTarget out;
  out.result = tune_encoding(plan.tunable, t.lags.head(t.n_train), t.y.head(t.n_train), options);
  out.untuned = score_encoding(plan.encoding, t.lags, t.y, a.train_context, a.eval_contexts, a.ridge);
  out.tuned = score_encoding(out.result.tuned, t.lags, t.y, a.train_context, a.eval_contexts, a.ridge);
  return out;
}

}  // namespace ropekit
