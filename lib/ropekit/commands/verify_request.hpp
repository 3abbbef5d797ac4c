#pragma once
// The request of the Monte Carlo checks of RF-RoPE (`ropekit verify master | variance | convergence | sampling`,
// ropekit.verify_master): the options as given, validated here once, so that the command line and the Python module
// only bind options to a request and render its result (issue 19). Messages name the command and its options
// ("ropekit verify master: --alpha = 2 (must be in (0, 1))"); the Python module rewrites them to its own words.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/mc/monte_carlo.hpp"
#include "ropekit/spectral/rf_estimator.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

struct VerifyRequest {
  std::string command = "ropekit verify master";  ///< names the messages
  std::string spectrum;                            ///< the kernel claimed, a spelling
  std::optional<std::string> draw_from;            ///< draw the frequencies from this density instead
  bool power = false;                              ///< draw from wrong_density(spectrum): the power check
  std::string lags_text;                           ///< "": default_lag_text(k, 4)
  std::optional<Lags> lags;                        ///< the lags as numbers instead (rows = lags, cols = k)
  int blocks = 64;                                 ///< D, in [1, 2^20]
  bool blocks_given = false;                       ///< blocks typed by the user: must agree with q/k
  std::int64_t trials = 20000;                     ///< N
  std::uint64_t seed = kDefaultSeed;
  int threads = 0;
  std::string sampling = "iid";                    ///< iid, antithetic or stratified (k = 1)
  double alpha = 1e-6;                             ///< false-alarm rate over all lags, in [min_alpha(L), 1)
  std::optional<std::string> content;              ///< random, correlated or aligned; absent: the command's default
  std::optional<std::vector<double>> q, k;         ///< explicit content: 2 D numbers each, both or neither
};

/// What every verify subcommand needs, validated before any work.
struct VerifyPlan {
  Spectrum spectrum;
  std::optional<Spectrum> draw;
  Lags lags;
  McOptions mc;
};

/// Parses and checks the spectrum, the density drawn from (--draw-from, --power: not both; of the spectrum's
/// dims; a power check's density must differ at these lags), the lags (finite, within kMaxRfLag), --blocks,
/// the Monte Carlo options, --alpha, that the density can be sampled, and stratified sampling only for k = 1.
/// @throws InputError naming the command and the option.
VerifyPlan plan_verify(const VerifyRequest& request);

/// The --sampling option. @throws InputError "<command>: --sampling = '<text>' (must be iid, antithetic or
/// stratified)".
Sampling sampling_option(const std::string& command, const std::string& text);
/// The --content option. @throws InputError "<command>: --content = '<text>' (must be random, correlated or
/// aligned)".
ContentKind content_option(const std::string& command, const std::string& text);

/// The content of a master, variance or sampling run: the request's q and k (both or neither, not with a content
/// kind; an even count, as many k as q, D = their size / 2 agreeing with a typed --blocks, and
/// sum_i |A_i| + |B_i| small enough that the fourth moments of the scores over `trials` stay finite), else the
/// kind (`default_kind` when absent) drawn for request.blocks blocks from the seed. @throws InputError.
Content verify_content_of(const VerifyRequest& request, const std::string& default_kind, std::int64_t trials);

/// Refuses a Monte Carlo run of `blocks` blocks (repeated `repeats` times) beyond the memory and time budget,
/// blaming --trials, else --blocks, else --lags; returns its cost (to announce a long run).
Cost check_monte_carlo_budget(const std::string& command, const VerifyPlan& plan, double blocks, double repeats);

/// `verify master` (Theorem 2, and Proposition 4's variance) over all the request's lags: the plan, the content
/// ("random" by default), the budget, then verify(). @throws InputError as the pieces above.
VerifyReport verify_master(const VerifyRequest& request);

}  // namespace ropekit
