#include "ropekit/commands/frequencies_request.hpp"

#include <cmath>
#include <limits>
#include <numbers>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"

namespace ropekit {

FrequenciesPlan plan_frequencies(const FrequenciesRequest& a) {
  const Where where = Where::options(a.command);
  FrequenciesPlan p;
  p.encoding = parse_encoding_for(a.command, a.encoding);
  if (a.convention == "huggingface") p.convention = Convention::huggingface;
  else if (a.convention == "ggml") p.convention = Convention::ggml;
  else throw_bad_value(where, "convention", "'" + a.convention + "'", "huggingface or ggml");
  if (a.seq_len) check_positive(where, "seq_len", *a.seq_len);
  if (!has_frequencies(p.encoding))
    throw_bad_value(where, "encoding", "'" + a.encoding + "'",
                    "an encoding with rotary frequencies (" + rotary_families() + ")");
  p.sum = std::holds_alternative<enc::DirectSum>(p.encoding.value);
  p.k = lag_dims(p.encoding);
  return p;
}

double frequencies_budget_rows(const FrequenciesPlan& p) { return encoding_size(p.encoding).freqs; }

Cost frequencies_cost(const FrequenciesRequest& a, const FrequenciesPlan& p, double rows) {
  const double cols = 3.0 + p.k * (a.float32 ? 2 : 1) + (p.sum ? 1 : 0);
  const bool json = a.format == "json";
  const double per_cell = json ? 240 : 120, rate = json ? 2e5 : 1e6;
  return Cost{rows * cols * (16 + per_cell), rows * cols / rate + 4 * rows / kElementsPerSecond};
}

void check_frequencies_budget(const FrequenciesRequest& a, const FrequenciesPlan& p) {
  const double rows = frequencies_budget_rows(p);
  const Cost cost = frequencies_cost(a, p, rows);
  if (cost.fits()) return;
  check_cost(Where::options(a.command), "encoding", fmt::format("'{}' ({} frequencies)", a.encoding, rows), cost,
             fmt::format("{} frequencies", largest_fitting(1, static_cast<std::int64_t>(rows), [&](std::int64_t r) {
                           return frequencies_cost(a, p, static_cast<double>(r)).fits();
                         })),
             fmt::format("in --format {}", a.format));
}

FrequencyRows frequency_rows(const FrequenciesRequest& a, const FrequenciesPlan& p) {
  const std::vector<const Encoding*> leaves = rotary_leaves(p.encoding);
  const auto k = static_cast<std::size_t>(p.k);
  FrequencyRows out;
  out.theta.resize(k);
  if (a.float32) out.theta32.resize(k);
  for (std::size_t part = 0; part < leaves.size(); ++part) {
    const Encoding& leaf = *leaves[part];
    const FrequencyTable f64 =
        for_encoding(a.command, a.encoding, [&] { return frequencies(leaf, a.seq_len, p.convention, false); });
    FrequencyTable f32;
    if (a.float32)
      f32 = for_encoding(a.command, a.encoding, [&] { return frequencies(leaf, a.seq_len, p.convention, true); });
    for (Eigen::Index i = 0; i < f64.theta.rows(); ++i) {
      out.part.push_back(static_cast<std::int64_t>(part));
      out.index.push_back(i);
      for (std::size_t j = 0; j < k; ++j) {
        const auto c = static_cast<Eigen::Index>(j);
        out.theta[j].push_back(c < f64.theta.cols() ? f64.theta(i, c) : 0.0);
        if (a.float32) out.theta32[j].push_back(c < f32.theta.cols() ? f32.theta(i, c) : 0.0);
      }
      // |theta| without squaring (norm() underflowed to 0 for theta below 1e-154 and printed an infinite
      // wavelength); a non-zero theta whose wavelength passes the largest double is refused rather than printed as
      // inf, while a zero frequency (a symmetric quantile grid's middle block, an identity plane) never repeats: its
      // wavelength is inf (CSV "inf", JSON null), as documented.
      const double size = f64.theta.row(i).stableNorm();
      const double wavelength = size == 0 ? std::numeric_limits<double>::infinity() : 2 * std::numbers::pi / size;
      if (size != 0 && !std::isfinite(wavelength))
        throw_bad_value(Where::options(a.command), "encoding", "'" + a.encoding + "'",
                        fmt::format("frequencies whose wavelength 2 pi / theta is a float64 number: theta_{} = {} "
                                    "is below 2 pi / DBL_MAX = 3.5e-308",
                                    i, format_number(size)));
      out.wavelength.push_back(wavelength);
      out.attention_factor.push_back(f64.attention_factor);
    }
  }
  return out;
}

}  // namespace ropekit
