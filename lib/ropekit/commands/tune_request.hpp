#pragma once
// The request of `ropekit fit-params --encoding E --free NAMES` and ropekit.fit_params (issue 8): tune an encoding's
// free parameters to target kernels (param_fit.hpp tune_encoding) and score it untuned and tuned as `ropekit fit`
// scores it. The options are validated here once, so that the command line and the Python module only bind options
// to a request and render its result (issue 19). Messages name the command and its options.

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/budget.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/fit/encoding_score.hpp"
#include "ropekit/fit/param_fit.hpp"
#include "ropekit/fit/tunable.hpp"

namespace ropekit {

struct TuneRequest {
  std::string command = "ropekit fit-params";  ///< names the messages
  std::string encoding;                         ///< the encoding to tune, a spelling
  std::vector<std::string> free;                ///< its parameters to tune (tunable.hpp), at least one
  std::vector<std::string> targets;             ///< families, data:FILE or kernel:ENCODING; empty: toy_targets()
  int train_context = 1024;                     ///< L in [1, 2^20]: tune on the target's lags below L
  std::vector<int> eval_contexts{1024, 2048, 4096, 8192};  ///< each in [1, 2^20]
  double ridge = 1e-4;                          ///< finite, > 0
  int starts = 3;                               ///< in [1, 1000]
  std::uint64_t seed = 1;
  int max_iterations = 200;                     ///< in [1, 100000]
  // What the encoding's spelling and kernel: targets leave unset, and the targets' parameters (as `fit`).
  int head_dim = 64, num_freqs = 16;
  double theta = 1e4, gamma = 1e-4;
  int freq_index = 3, second_freq_index = 5;
};

/// One target's values on its lags: a target family on 0..T_max-1, a table's rows, or an encoding's kernel.
struct TuneTarget {
  std::string name;
  Eigen::VectorXd lags, y;
  Eigen::Index n_train = 0;  ///< lags below train_context
};

/// A validated request: the encoding, its tunable form and every target resolved, and the estimated cost.
struct TunePlan {
  Encoding encoding;
  TunableEncoding tunable;
  std::vector<TuneTarget> targets;
  int max_length = 0;  ///< max(train_context, eval_contexts)
  Cost cost;
};

/// Checks --free, --ridge, --train-context, --starts, --max-iterations and --eval-contexts, parses the encoding
/// (a relative encoding of 1-D lags) and its free parameters, resolves every target (lags below --train-context,
/// finite values), and refuses a run beyond the memory and time budget. @throws InputError naming the option.
TunePlan plan_tuning(const TuneRequest& request);

/// One target tuned: the optimum over the starts, and the encoding's scores untuned and tuned.
struct TunedTarget {
  TuneResult result;
  std::vector<EncodingScore> untuned, tuned;
};

/// Tunes plan.targets[i] with `options` (ridge, starts, seed and max_iterations from the request; the caller may
/// set progress) and scores the untuned and tuned encodings on its lags.
TunedTarget tune_target(const TuneRequest& request, const TunePlan& plan, std::size_t i, const TuneOptions& options);

/// The request's TuneOptions (progress empty).
TuneOptions tune_options(const TuneRequest& request);

}  // namespace ropekit
