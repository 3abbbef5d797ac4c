#include "ropekit/commands/verify_request.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"

namespace ropekit {

Sampling sampling_option(const std::string& command, const std::string& text) {
  try {
    return parse_sampling(text);
  } catch (const InputError&) {
    throw_bad_value(command, "--sampling", "'" + text + "'", "iid, antithetic or stratified");
  }
}

ContentKind content_option(const std::string& command, const std::string& text) {
  try {
    return parse_content_kind(text);
  } catch (const InputError&) {
    throw_bad_value(command, "--content", "'" + text + "'", "random, correlated or aligned");
  }
}

VerifyPlan plan_verify(const VerifyRequest& a) {
  const std::string& command = a.command;
  const Where where = Where::options(command);
  VerifyPlan p;
  p.spectrum = parse_spectrum(a.spectrum);
  if (a.draw_from && a.power)
    throw_bad_value(command, "--draw-from", quote(*a.draw_from), "absent with --power (give one of them)");
  if (a.draw_from) {
    p.draw = parse_spectrum(*a.draw_from);
    if (dims(*p.draw) != dims(p.spectrum))
      throw_bad_value(command, "--draw-from", fmt::format("'{}' (dims {})", *a.draw_from, dims(*p.draw)),
                      fmt::format("of --spectrum's dims, {}", dims(p.spectrum)));
  }
  p.lags = a.lags ? *a.lags
                  : parse_lags(a.lags_text.empty() ? default_lag_text(dims(p.spectrum), 4) : a.lags_text,
                               dims(p.spectrum), where, "--lags");
  check_rf_lag_range(where, std::span<const double>(p.lags.data(), static_cast<std::size_t>(p.lags.size())));
  if (a.power) {
    p.draw = wrong_density(p.spectrum);
    if (!differs(p.spectrum, *p.draw, p.lags))
      throw InputError(fmt::format("{}: --power: the wrong density ({}) has the same kernel as {} at these lags "
                                   "(a scale of 1 is its own reciprocal): use a scale other than 1",
                                   command, wrong_density_note(p.spectrum), spelling(p.spectrum)));
  }
  check_in_range(where, "blocks", a.blocks, 1, 1 << 20);
  p.mc.trials = a.trials;
  p.mc.seed = a.seed;
  p.mc.threads = a.threads;
  p.mc.sampling = sampling_option(command, a.sampling);
  p.mc.validate(where);
  if (!(a.alpha > 0 && a.alpha < 1)) throw_bad_value(where, "alpha", format_number(a.alpha), "in (0, 1)");
  const double lag_count = static_cast<double>(p.lags.rows());
  if (!(a.alpha >= min_alpha(p.lags.rows())))
    throw_bad_value(where, "alpha", format_number(a.alpha),
                    fmt::format("in [{}, 1) for {} lags: alpha / (2 L) must be a normal float64 number, or the "
                                "normal quantile is not computed",
                                format_number(min_alpha(p.lags.rows())), lag_count));
  check_samplable(p.draw ? *p.draw : p.spectrum, command + ": spectrum");
  if (p.mc.sampling == Sampling::stratified && dims(p.spectrum) != 1)
    throw_bad_value(command, "--sampling", "stratified", "iid or antithetic for k > 1 (stratified needs k = 1)");
  return p;
}

Content verify_content_of(const VerifyRequest& a, const std::string& default_kind, std::int64_t trials) {
  const std::string& command = a.command;
  const Where where = Where::options(command);
  if (a.q || a.k) {
    if (!a.q || !a.k)
      throw_bad_value(command, a.q ? "--q" : "--k", fmt::format("{}", fmt::join(a.q ? *a.q : *a.k, ",")),
                      fmt::format("given with {} (both or neither)", a.q ? "--k" : "--q"));
    if (a.content) throw_bad_value(command, "--content", quote(*a.content), "absent with --q/--k (give one of them)");
    const std::vector<double>&q = *a.q, &k = *a.k;
    if (q.size() % 2 != 0)
      throw_bad_value(where, "q", fmt::format("{} numbers", q.size()), "an even count: 2 per block");
    if (k.size() != q.size())
      throw_bad_value(where, "k", fmt::format("{} numbers", k.size()), fmt::format("as many as --q, {}", q.size()));
    const int D = static_cast<int>(q.size() / 2);
    if (a.blocks_given && a.blocks != D)
      throw_bad_value(where, "blocks", std::to_string(a.blocks),
                      fmt::format("{} = --q's {} numbers / 2 (give --blocks {} or omit it)", D, q.size(), D));
    Content c = content_from_vectors(q, k);
    // The scores and their fourth moments over the trials must stay finite: |S - S_0| <= 2 sum_i (|A_i| + |B_i|)
    // and sum (S - S_0)^4 over N trials below DBL_MAX.
    const Coefficients co = coefficients(c);
    const double scale = co.A.cwiseAbs().sum() + co.B.cwiseAbs().sum();
    const double limit = std::pow(std::numeric_limits<double>::max() / (16.0 * static_cast<double>(trials) * 8.0), 0.25);
    if (!(scale <= limit))
      throw_bad_value(where, "q", fmt::format("content with sum_i |A_i| + |B_i| = {}", format_number(scale)),
                      fmt::format("at most {} for N = {} (A_i = q_i . k_i, B_i = q_i^T J k_i): the fourth moments of "
                                  "the scores must stay finite",
                                  format_number(limit), trials));
    return c;
  }
  return make_content(content_option(command, a.content ? *a.content : default_kind), a.blocks, a.seed);
}

Cost check_monte_carlo_budget(const std::string& command, const VerifyPlan& p, double blocks, double repeats) {
  const Where where = Where::options(command);
  const int k = static_cast<int>(p.lags.cols());
  const double L = static_cast<double>(p.lags.rows());
  auto cost_of = [&](std::int64_t trials, double D, double lags) {
    Cost c = monte_carlo_cost(trials, D, lags, k, p.mc.threads);
    c.seconds *= repeats;
    return c;
  };
  const Cost cost = cost_of(p.mc.trials, blocks, L);
  if (!cost.fits()) {
    const std::string for_what = fmt::format("for D = {} blocks and {} lags", blocks, L);
    if (cost_of(2, blocks, L).fits())
      check_cost(where, "trials", std::to_string(p.mc.trials), cost,
                 std::to_string(largest_fitting(2, p.mc.trials, [&](std::int64_t n) { return cost_of(n, blocks, L).fits(); })),
                 for_what);
    if (cost_of(2, 1, L).fits())
      check_cost(where, "blocks", format_number(blocks), cost,
                 std::to_string(largest_fitting(1, static_cast<std::int64_t>(blocks), [&](std::int64_t d) {
                   return cost_of(2, static_cast<double>(d), L).fits();
                 })),
                 "with --trials 2");
    check_cost(where, "lags", fmt::format("{} lags", L), cost, "fewer", "with --trials 2 and one block");
  }
  return cost;
}

VerifyReport verify_master(const VerifyRequest& request) {
  const VerifyPlan p = plan_verify(request);
  VerifyOptions o;
  o.spectrum = p.spectrum;
  o.draw = p.draw;
  o.content = verify_content_of(request, "random", p.mc.trials);
  o.lags = p.lags;
  o.mc = p.mc;
  o.alpha = request.alpha;
  check_monte_carlo_budget(request.command, p, static_cast<double>(o.content.blocks()), 1);
  return verify(o);
}

}  // namespace ropekit
