#include "ropekit/encodings/kernel_request.hpp"

#include <cmath>
#include <span>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

KernelPlan plan_kernel(const KernelRequest& a) {
  const std::string& command = a.command;
  const Where where = Where::options(command);
  KernelPlan p;
  for (const auto& text : a.encodings) {
    p.encodings.push_back(parse_encoding_for(command, text));
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
  p.all_plain = true;
  for (const auto& e : p.encodings) {
    p.any_rf = p.any_rf || std::holds_alternative<enc::RfRope>(e.value);
    p.all_plain = p.all_plain && plain_rope(e).has_value();
  }
  return p;
}

Lags kernel_lags(const KernelRequest& a, const KernelPlan& p) {
  return parse_lags(p.lag_text, p.k, Where::options(a.command), "--lags");
}

void check_kernel_lags(const KernelRequest& a, const KernelPlan& p, const Lags& lags) {
  if (p.any_rf)
    check_rf_lag_range(Where::options(a.command),
                       std::span<const double>(lags.data(), static_cast<std::size_t>(lags.size())), " for rf-rope");
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
