#include "ropekit/core/lags.hpp"

#include <fmt/format.h>

#include "ropekit/core/spelling.hpp"

namespace ropekit {

/// At most this many components per lag vector (the spectra's kMaxDims).
constexpr int kMaxLagDims = 1024;

Lags parse_lags(std::string_view text, int k, std::string_view what) {
  return parse_lags(text, k, Where("ropekit"), what);
}

Lags parse_lags(std::string_view text, int k, const Where& where, std::string_view what) {
  std::vector<std::vector<double>> rows;
  if (k == 1 && text.find(';') == std::string_view::npos) {
    for (double v : parse_number_list(text, where, what, 1u << 20)) rows.push_back({v});
  } else {
    std::string_view rest = text;
    while (true) {
      const auto semi = rest.find(';');
      const std::string_view item = rest.substr(0, semi);
      auto v = parse_number_list(item, where, what, static_cast<std::size_t>(kMaxLagDims));
      if (static_cast<int>(v.size()) != k)
        throw_bad_value(where, what, fmt::format("'{}' ({} components)", item, v.size()),
                        fmt::format("lag vectors of k = {} components, separated by ';' (e.g. \"1,0;0,2\")", k));
      rows.push_back(std::move(v));
      if (semi == std::string_view::npos) break;
      rest.remove_prefix(semi + 1);
      if (rows.size() > (1u << 20)) throw_bad_value(where, what, "more than 2^20 lags", "at most 2^20 lags");
    }
  }
  Lags lags(static_cast<Eigen::Index>(rows.size()), k);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int j = 0; j < k; ++j) lags(static_cast<Eigen::Index>(i), j) = rows[i][static_cast<std::size_t>(j)];
  return lags;
}

std::string lag_text(std::span<const double> lag) {
  std::string out;
  for (double v : lag) out += (out.empty() ? "" : ",") + format_number(v);
  return out;
}

}  // namespace ropekit
