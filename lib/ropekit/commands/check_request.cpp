#include "ropekit/commands/check_request.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/encodings/long_term_decay.hpp"

namespace ropekit {

namespace {

void scheme_origs(const Encoding& e, std::vector<double>& out) {
  if (const auto* d = std::get_if<enc::DirectSum>(&e.value)) {
    for (const auto& p : d->parts) scheme_origs(p, out);
    return;
  }
  const FrequencySchedule* f = schedule_of(e);
  if (!f) return;
  if (const auto L0 = scheme_original_length(f->scaling)) out.push_back(*L0);
}

// The window as messages spell it: "(default)", the text quoted (`quoted`), or the numbers given.
std::string window_echo(const CheckRequest& a, bool quoted) {
  if (a.window) return quote(lag_text(std::span<const double>(a.window->data(), a.window->size())));
  if (a.window_text.empty()) return "(default)";
  return quoted ? quote(a.window_text) : a.window_text;
}

// Flops of one dense nd operator: the torus closed form Q diag(R) Q^T (~4 n^3), else a matrix exponential
// (scaling and squaring, Pade 13: ~30 n^3).
double nd_operator_flops(const Encoding& e, double n) { return (has_frequencies(e) ? 4 : 30) * n * n * n; }

// The rotary frequencies of every part at sequence length T, their first component (the window runs along the
// first axis of k-D lags, as exactness() does).
Eigen::VectorXd decay_frequencies(const Encoding& e, double T) {
  std::vector<double> all;
  for (const auto* leaf : rotary_leaves(e)) {
    const FrequencyTable f = frequencies(*leaf, T);
    for (Eigen::Index i = 0; i < f.theta.rows(); ++i) all.push_back(f.theta(i, 0));
  }
  return Eigen::Map<const Eigen::VectorXd>(all.data(), static_cast<Eigen::Index>(all.size()));
}

bool query_dependent(const CheckRequest& a, std::size_t j) { return j < a.layers.size() && a.layers[j].temperature; }

}  // namespace

std::vector<double> scheme_original_contexts(const Encoding& e) {
  std::vector<double> out;
  scheme_origs(e, out);
  return out;
}

std::vector<double> default_check_window(const Encoding& e) {
  std::vector<double> w = {0, 1, 2, 5, 10, 50, 100, 1000};
  for (double o : scheme_original_contexts(e)) w.push_back(2 * o);
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

CheckPlan plan_check(const CheckRequest& a) {
  const std::string& command = a.command;
  const Where where = Where::options(command);
  if (!a.layers.empty() && a.layers.size() != a.encodings.size())
    throw std::logic_error("plan_check: one layer type per encoding");
  CheckPlan p;
  for (const auto& text : a.encodings) p.encodings.push_back(parse_encoding_for(command, text));
  if (a.seq_len) check_positive(where, "seq_len", *a.seq_len);
  if (a.window && a.window->empty()) throw_bad_value(where, "window", "[]", "at least one lag");
  if (a.window)
    for (double lag : *a.window) check_finite(where, "window", lag);
  for (const auto& e : p.encodings) {
    if (a.window) {
      p.windows.push_back(*a.window);
    } else if (a.window_text.empty()) {
      p.windows.push_back(default_check_window(e));
    } else {
      const Lags w = parse_lags(a.window_text, 1, where, "--window");
      p.windows.emplace_back(w.data(), w.data() + w.rows());
    }
  }
  // A layer type's window lags are those it sees (|lag| < span).
  for (std::size_t j = 0; j < a.layers.size(); ++j) {
    const auto& l = a.layers[j];
    if (!l.span) continue;
    auto& w = p.windows[j];
    const std::size_t before = w.size();
    std::erase_if(w, [&](double lag) { return std::abs(lag) >= static_cast<double>(*l.span); });
    if (w.empty())
      throw_bad_value(where, "window", window_echo(a, true),
                      fmt::format("lags {} sees ({} hides |lag| >= {})", l.label, l.window, *l.span));
    if (w.size() != before)
      p.notes.push_back(fmt::format("{}: {} hides |lag| >= {}: checked on the {} window lag(s) it sees", l.label,
                                    l.window, *l.span, w.size()));
  }
  for (std::size_t j = 0; j < a.layers.size(); ++j)
    if (query_dependent(a, j))
      p.notes.push_back(a.layers[j].label +
                        ": is_relative false: the score is scaled by s(p) of the query position p "
                        "(attn_temperature_tuning), so it depends on p, not only on the lag; the other rows are G's "
                        "own");
  return p;
}

double check_check_budget(const CheckRequest& a, const CheckPlan& p) {
  const Where where = Where::options(a.command);
  // Per encoding, w window lags: w (2 + 2w) operators (nd: a dense exponential, ~40 n^3 flops; others assembled
  // from blocks, n^2) and w (2 + w) products of n x n matrices (2 n^3 flops each); memory a few n x n matrices.
  const Encoding* current = nullptr;
  auto cost_of = [&](double n, bool nd, double w) {
    const double op = nd ? nd_operator_flops(*current, n) / kFlopsPerSecond : 4 * n * n / kElementsPerSecond;
    return Cost{8 * n * n * 8 + w * 400, w * (2 + 2 * w) * op + w * (2 + w) * 2 * n * n * n / kFlopsPerSecond};
  };
  double seconds = 0;
  for (std::size_t j = 0; j < p.encodings.size(); ++j) {
    current = &p.encodings[j];
    const double n = encoding_size(p.encodings[j]).n, w = static_cast<double>(p.windows[j].size());
    const bool nd = std::holds_alternative<enc::Nd>(p.encodings[j].value);
    const Cost c = cost_of(n, nd, w);
    if (!c.fits()) {
      if (cost_of(n, nd, 1).fits())
        check_cost(where, "window", fmt::format("{} lags", w), c,
                   fmt::format("{} lags", largest_fitting(1, static_cast<std::int64_t>(w), [&](std::int64_t v) {
                                 return cost_of(n, nd, static_cast<double>(v)).fits();
                               })),
                   fmt::format("for {} (n = {})", a.encodings[j], n));
      check_cost(where, "encoding", fmt::format("'{}' (n = {})", a.encodings[j], n), cost_of(n, nd, 1),
                 fmt::format("n = {}", largest_fitting(1, static_cast<std::int64_t>(n), [&](std::int64_t v) {
                               return cost_of(static_cast<double>(v), nd, 1).fits();
                             })),
                 "with a window of one lag");
    }
    seconds += c.seconds;
  }
  return seconds;
}

std::optional<SwitchDefect> longrope_switch_defect(const Encoding& e, const std::vector<double>& window) {
  const FrequencySchedule* s = schedule_of(e);
  const auto* lr = s ? std::get_if<scaling::LongRope>(&s->scaling) : nullptr;
  if (!lr) return std::nullopt;
  const double orig = lr->orig;
  const FrequencyTable shorts = frequencies(e, orig), longs = frequencies(e, orig + 1);
  const double pairs = static_cast<double>(shorts.theta.rows()) + shorts.identity_dims / 2.0;
  // The normalised score of isotropic content: the query at p under the long factors, the key at p - lag cached
  // under the short ones (transformers' KV cache across the switch), against the long kernel at the same lag.
  auto score = [&](double p, double lag) {
    double k = shorts.identity_dims / 2.0;
    for (Eigen::Index i = 0; i < shorts.theta.rows(); ++i) k += std::cos(longs.theta(i, 0) * p - shorts.theta(i, 0) * (p - lag));
    return k / pairs;
  };
  auto kernel_long = [&](double lag) {
    double k = shorts.identity_dims / 2.0;
    for (Eigen::Index i = 0; i < longs.theta.rows(); ++i) k += std::cos(longs.theta(i, 0) * lag);
    return k / pairs;
  };
  SwitchDefect worst;
  for (const double w : window) {
    const double lag = std::floor(std::abs(w));
    if (lag < 1) continue;
    // Query positions orig .. orig + lag - 1 (the key before orig): at most 64 of them, evenly spaced.
    const double steps = std::min(lag, 64.0);
    for (double k = 0; k < steps; ++k) {
      const double p = orig + std::floor(k * lag / steps);
      const double d = std::abs(score(p, lag) - kernel_long(lag));
      if (d > worst.defect) worst = {lag, d};
    }
  }
  return worst;
}

std::vector<CheckRow> check_rows(const CheckRequest& a, const CheckPlan& p) {
  const std::string& command = a.command;
  const Where where = Where::options(command);
  std::vector<CheckRow> rows;
  for (std::size_t j = 0; j < p.encodings.size(); ++j) {
    const Encoding& e = p.encodings[j];
    const std::string& text = a.encodings[j];
    const std::string name = spelling(e);
    const std::string label = j < a.layers.size() ? a.layers[j].label : std::string();
    const auto& window = p.windows[j];
    auto add = [&](const char* quantity, std::optional<double> lag, std::variant<bool, double> value) {
      rows.push_back({label, name, quantity, lag, value});
    };
    // A query temperature s(p) scales the score by the query's position: not a function of the lag alone.
    add("is_relative", std::nullopt, is_relative(e) && !query_dependent(a, j));
    add("is_exact", std::nullopt, is_exact(e));
    add("is_orthogonal", std::nullopt, is_orthogonal(e));
    const Exactness x = for_encoding(command, text, [&] { return exactness(e, window, a.seq_len); });
    auto defect = [&](const char* quantity, double v) {
      if (std::isnan(v) && !is_relative(e)) return;  // not defined for an absolute encoding
      if (!std::isfinite(v))
        throw_bad_value(where, "window", window_echo(a, false),
                        fmt::format("lags at which G is finite for '{}' ({} is {})", text, quantity, format_number(v)));
      add(quantity, std::nullopt, v);
    };
    if (is_relative(e)) {
      defect("group_law_defect", x.group_law);
      defect("orthogonality_defect", x.orthogonality);
      defect("reversibility_defect", x.reversibility);
    } else {
      defect("relativity_defect", x.relativity);
    }
    if (const auto sw = longrope_switch_defect(e, window)) add("longrope_switch_defect", sw->lag, sw->defect);
    if (has_frequencies(e))
      for (double lag : window) {
        const double T = a.seq_len ? *a.seq_len : std::abs(lag) + 1;
        const double b =
            for_encoding(command, text, [&] { return long_term_decay_bound(decay_frequencies(e, T), lag); });
        add("long_term_decay_bound", lag, b);
      }
  }
  return rows;
}

}  // namespace ropekit
