#include "ropekit/core/lags.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/spelling.hpp"
#include "ropekit/core/vecmath.hpp"

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

std::optional<NearGrid> near_grid(std::span<const double> t) {
  const std::size_t L = t.size();
  if (L < 2) return std::nullopt;
  double top = 0;
  for (double v : t) {
    if (!std::isfinite(v)) return std::nullopt;
    top = std::max(top, std::fabs(v));
  }
  if (is_even_grid(t.data(), L)) return NearGrid{0.0, std::vector<double>(t.begin(), t.end()), 0.0};
  const double tol = kNearGridUlps * (std::nextafter(top, INFINITY) - top);
  std::optional<NearGrid> best;
  for (const double h : {t[1] - t[0], (t[L - 1] - t[0]) / static_cast<double>(L - 1)}) {
    if (!(h != 0) || !std::isfinite(h)) continue;
    NearGrid c;
    c.t0 = t[0];
    c.s.resize(L);
    for (std::size_t m = 0; m < L; ++m) {
      c.s[m] = static_cast<double>(m) * h;  // as is_even_grid spells it: s[0] + m (s[1] - s[0])
      // The residual in long double: t[m] - t0 and the sum are exact there for lags within 2^11 of each
      // other in magnitude, and off by 2^-64 relative otherwise, far below the tolerance.
      const long double r = static_cast<long double>(t[m]) - c.t0 - c.s[m];
      c.delta = std::max(c.delta, static_cast<double>(std::fabs(r)));
    }
    if (!(c.delta <= tol) || !is_even_grid(c.s.data(), L)) continue;
    if (!best || c.delta < best->delta) best = std::move(c);
  }
  return best;
}

namespace {
std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

LagStream::LagStream(std::string_view text, const Where& where, std::string_view what) {
  // The messages and the values of parse_number_list (spelling.cpp), item by item, without expanding ranges.
  auto bad = [&](std::string_view item, std::string_view why) {
    throw_bad_value(where, what, fmt::format("'{}'", item), why);
  };
  if (trim_blanks(text).empty()) bad(text, "a non-empty list such as 0,1,2 or 0:1024");
  bool any = false;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = trim_blanks(rest.substr(0, comma));
    Item it;
    if (item.find(':') == std::string_view::npos) {
      const auto v = parse_double(item);
      if (!v) bad(item, "a number (list: a,b,c; range: start:stop[:step])");
      if (!std::isfinite(*v)) bad(item, "finite");
      it.start = *v;
      count_ += 1;
      any = true;
    } else {
      std::vector<double> parts;
      std::string_view r = item;
      while (true) {
        const auto colon = r.find(':');
        const auto v = parse_double(r.substr(0, colon));
        if (!v || !std::isfinite(*v)) bad(item, "a range start:stop[:step] of finite numbers");
        parts.push_back(*v);
        if (colon == std::string_view::npos) break;
        r.remove_prefix(colon + 1);
      }
      if (parts.size() < 2 || parts.size() > 3) bad(item, "a range start:stop[:step]");
      it = Item{parts[0], parts[1], parts.size() == 3 ? parts[2] : 1.0, true};
      if (!(it.step > 0)) bad(item, "a range with step > 0");
      double n = std::max(0.0, std::ceil((it.stop - it.start) / it.step));
      if (!(n <= 0x1p53)) bad(item, "a range of at most 2^53 values (start + i step with i exact in float64)");
      // The exact count of next()'s values start + i step < stop: the quotient's rounding can be one off.
      while (n > 0 && !(it.start + (n - 1) * it.step < it.stop)) n -= 1;
      while (it.start + n * it.step < it.stop) n += 1;
      count_ += n;
      it.count = n;
      any = any || it.start < it.stop;
    }
    items_.push_back(it);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (!any) bad(text, "a non-empty list (the range is empty)");
}

std::size_t LagStream::next(double* out, std::size_t max) {
  std::size_t n = 0;
  while (n < max && item_ < items_.size()) {
    const Item& it = items_[item_];
    if (!it.range) {
      out[n++] = it.start;
      ++item_;
      continue;
    }
    const double v = it.start + static_cast<double>(index_) * it.step;  // as parse_number_list
    if (!(v < it.stop)) {
      ++item_;
      index_ = 0;
      continue;
    }
    out[n++] = v;
    ++index_;
  }
  return n;
}

std::vector<LagStream::Segment> LagStream::segments() const {
  std::vector<Segment> out;
  for (const Item& it : items_)
    if (it.count > 0) out.push_back({it.start, it.range ? it.step : 0.0, static_cast<std::int64_t>(it.count)});
  return out;
}

std::string lag_text(std::span<const double> lag) {
  std::string out;
  for (double v : lag) out += (out.empty() ? "" : ",") + format_number(v);
  return out;
}

std::string default_lag_text(int k, double last) {
  if (k == 1) return "0,0.5,1,2," + format_number(last);
  auto vec = [&](auto f) {
    std::string s;
    for (int j = 0; j < k; ++j) s += (j ? "," : "") + format_number(f(j));
    return s;
  };
  return vec([](int) { return 0.0; }) + ";" + vec([](int j) { return j == 0 ? 1.0 : 0.0; }) + ";" +
         vec([&](int j) { return j == k - 1 ? 2.0 : 0.0; }) + ";" + vec([](int) { return 0.5; });
}

}  // namespace ropekit
