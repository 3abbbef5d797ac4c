#include "ropekit/commands/kernel_request.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/kernel_cost.hpp"
#include "ropekit/encodings/rotary_spectrum.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

KernelPlan plan_kernel(const KernelRequest& a) {
  const std::string& command = a.command;
  const Where where = Where::options(command);
  KernelPlan p;
  for (std::size_t j = 0; j < a.encodings.size(); ++j) {
    const std::string& text = a.encodings[j];
    // A model layer type's encoding is the reader's value (when `text` is its spelling); one given as such is parsed.
    const bool from_model = j < a.layers.size() && a.layers[j].value && a.layers[j].encoding == text;
    p.encodings.push_back(from_model ? *a.layers[j].value : parse_encoding_for(command, text));
    if (!is_relative(p.encodings.back()))
      throw_bad_value(where, "encoding", "'" + text + "'",
                      "a relative encoding: sinusoidal is absolute and has no kernel of the lag (`ropekit check` "
                      "reports its relativity defect)");
  }
  if (!(a.rho >= -1 && a.rho <= 1)) throw_bad_value(where, "rho", format_number(a.rho), "in [-1, 1]");
  if (a.seq_len) check_positive(where, "seq_len", *a.seq_len);
  p.k = lag_dims(p.encodings.front());
  for (std::size_t i = 1; i < p.encodings.size(); ++i)
    if (lag_dims(p.encodings[i]) != p.k)
      throw_bad_value(where, "encoding", fmt::format("'{}' ({}-D lags)", a.encodings[i], lag_dims(p.encodings[i])),
                      fmt::format("encodings of one lag dimension: '{}' takes {}-D lags", a.encodings[0], p.k));
  if (a.lags_text.empty() && !a.lags_given && p.k != 1)
    throw_bad_value(where, "lags", "(missing)",
                    fmt::format("given for {}-D lags, e.g. --lags '1,0;0,2' (no default for k-D encodings)", p.k));
  p.lag_text = a.lags_text.empty() ? "0,1,10,100,1000" : a.lags_text;
    for (const auto& e : p.encodings) {
    p.any_rf = p.any_rf || std::holds_alternative<enc::RfRope>(e.value);
    p.any_plain = p.any_plain || plain_rope(e).has_value();
  }
  if (!a.layers.empty() && a.layers.size() != a.encodings.size())
    throw std::logic_error("plan_kernel: one layer type per encoding");
  const bool windowed =
      std::any_of(a.layers.begin(), a.layers.end(), [](const ModelLayer& l) { return l.span.has_value(); });
  if (windowed && p.k != 1)
    throw_bad_value(where, "lags", quote(p.lag_text), "1-D lags for a model layer type with a window (it counts tokens)");
  if (a.position && !(*a.position >= 0))
    throw_bad_value(where, "position", format_number(*a.position), "a query position >= 0");
  return p;
}

bool kernel_masked(const KernelRequest& a, std::size_t j, double lag) {
  return !a.layers.empty() && a.layers[j].span && std::abs(lag) >= static_cast<double>(*a.layers[j].span);
}

double kernel_query_scale(const KernelRequest& a, std::size_t j, double lag) {
  if (a.layers.empty() || !a.layers[j].temperature) return 1.0;
  return query_scale(*a.layers[j].temperature, a.position.value_or(std::abs(lag)));
}

std::vector<std::string> kernel_layer_notes(const KernelRequest& a, std::optional<std::pair<double, double>> lags) {
  std::vector<std::string> notes;
  if (lags)
    for (std::size_t j = 0; j < a.layers.size(); ++j)
      if (kernel_masked(a, j, lags->first) || kernel_masked(a, j, lags->second))
        notes.push_back(fmt::format("{}: {} hides |lag| >= {}: masked there (empty cells, null in JSON), not "
                                    "kernel values",
                                    a.layers[j].label, a.layers[j].window, *a.layers[j].span));
  for (const auto& l : a.layers)
    if (l.temperature)
      notes.push_back(fmt::format("{}: the query is scaled by s(p) = {} ln(1 + floor((p + 1)/{})) + 1 at p = {}: "
                                  "kernel times s(p), content variance times s(p)^2",
                                  l.label, format_number(l.temperature->attn_scale),
                                  format_number(l.temperature->floor_scale),
                                  a.position ? format_number(*a.position) : std::string("|lag|")));
  return notes;
}

const std::vector<std::string>& kernel_column_names() {
  static const std::vector<std::string> names = {"encoding",           "lag",           "kernel",
                                                 "content_variance",   "expected_kernel", "frequency_variance",
                                                 "sine_residual",      "continuum",     "continuum_sine"};
  return names;
}

namespace {

// Whether some encoding of the plan fills column c (encoding, lag, kernel and content variance: every one).
bool column_filled(const KernelPlan& p, const std::string& c) {
  if (c == "expected_kernel" || c == "frequency_variance") return p.any_rf;
  if (c == "sine_residual" || c == "continuum" || c == "continuum_sine") return p.any_plain;
  return true;
}

}  // namespace

std::vector<std::string> kernel_plan_columns(const KernelPlan& p) {
  std::vector<std::string> out;
  for (const auto& c : kernel_column_names())
    if (column_filled(p, c)) out.push_back(c);
  return out;
}

std::vector<std::string> checked_kernel_columns(const KernelRequest& a, const KernelPlan& p,
                                                const std::vector<std::string>& columns) {
  const Where where = Where::options(a.command);
  const auto& order = kernel_column_names();
  std::vector<std::string> out;
  for (const std::string& c : columns) {
    const bool known = std::find(order.begin(), order.end(), c) != order.end();
    if (p.encodings.size() == 1 && !(known && column_filled(p, c)))
      throw_bad_value(where, "columns", fmt::format("'{}'", c),
                      fmt::format("columns of this encoding's kernel: {}", fmt::join(kernel_plan_columns(p), ", ")));
    if (!known)
      throw_bad_value(where, "columns", fmt::format("'{}'", c), fmt::format("columns of kernel: {}", fmt::join(order, ", ")));
    if (column_filled(p, c) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

Lags kernel_lags(const KernelRequest& a, const KernelPlan& p) {
  return parse_lags(p.lag_text, p.k, Where::options(a.command), "--lags");
}

void check_kernel_lags(const KernelRequest& a, const KernelPlan& p, const Lags& lags) {
  if (p.any_rf)
    check_rf_lag_range(Where::options(a.command),
                       std::span<const double>(lags.data(), static_cast<std::size_t>(lags.size())), " for rf-rope");
}

namespace {
// What a kernel request costs per lag and per held row, computed once (reading an encoding's spectrum builds its
// blocks: 0.25 s for 2^21 frequencies, which the search for the largest count that fits would repeat per step).
struct KernelRates {
  double blocks = 0, seconds_per_lag = 0, row_bytes = 0;
};

KernelRates kernel_rates(const KernelPlan& p, bool matrix) {
  const double columns = 4.0 + (p.any_rf ? 2 : 0) + (p.any_plain ? 3 : 0);
  KernelRates r;
  for (const auto& e : p.encodings) {
    const EncodingSize z = encoding_size(e);
    r.blocks = std::max(r.blocks, kernel_block_bytes(e, z));  // one encoding's blocks at a time
    r.seconds_per_lag += kernel_lag_seconds(e, z, columns);
  }
  // A held row: its cells as text (about 150 bytes each), or as float64 plus a copy of the lag (Python).
  r.row_bytes = static_cast<double>(p.encodings.size()) * (matrix ? (columns + 1) * 8.0 : columns * 150.0);
  return r;
}

Cost kernel_cost(const KernelRates& r, double rows, double held) {
  return Cost{r.blocks + std::min(rows, held) * r.row_bytes, rows * r.seconds_per_lag};
}
}  // namespace

Cost kernel_cost(const KernelPlan& p, double rows, double held, bool matrix) {
  return kernel_cost(kernel_rates(p, matrix), rows, held);
}

void check_kernel_budget(const KernelRequest& a, const KernelPlan& p, std::int64_t count, double held) {
  // An encoding whose blocks alone exceed the memory is refused as such, not as "at most 0 lags" (issue 20:
  // direct-sum:[20 x jordan(m=32,dim=2^24)] was accepted and ran out of 24 GB).
  for (std::size_t j = 0; j < p.encodings.size(); ++j)
    check_encoding_blocks(Where::options(a.command), "encoding", a.encodings[j], p.encodings[j]);
  const KernelRates rates = kernel_rates(p, a.matrix);
  const Cost cost = kernel_cost(rates, static_cast<double>(count), held);
  if (cost.fits()) return;
  check_cost(Where::options(a.command), "lags", fmt::format("{} lags", count), cost,
             fmt::format("{} lags", largest_fitting(1, count, [&](std::int64_t r) {
                           return kernel_cost(rates, static_cast<double>(r), held).fits();
                         })),
             fmt::format("for {}", fmt::join(a.encodings, " and ")));
}

std::vector<KernelRow> kernel_block(const KernelRequest& a, const KernelPlan& p, std::size_t j, const Lags& lags) {
  const Encoding& e = p.encodings[j];
  auto rows = for_encoding(a.command, a.encodings[j], [&] { return kernel_rows(e, lags, a.rho, a.seq_len); });
  for (Eigen::Index i = 0; i < lags.rows(); ++i) {
    const KernelRow& r = rows[static_cast<std::size_t>(i)];
    if (!std::isfinite(r.kernel) || !std::isfinite(r.content_variance)) {
      const Eigen::VectorXd lag = lags.row(i).transpose();
      throw_bad_value(Where::options(a.command), "lags",
                      lag_text(std::span<const double>(lag.data(), static_cast<std::size_t>(lag.size()))),
                      fmt::format("lags at which G is finite for '{}' (the kernel or the content variance "
                                  "overflows float64 there)",
                                  a.encodings[j]));
    }
  }
  return rows;
}

}  // namespace ropekit
