#include "ropekit/spectral/empirical.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/input_file.hpp"

namespace ropekit {

namespace spectral {

void validate(const Empirical& e, std::string_view where) {
  if (e.w.rows() < 1) throw_bad_value(where, "frequencies", "none", "at least one frequency vector");
  check_dims(where, e.w.cols());
  for (Eigen::Index i = 0; i < e.w.size(); ++i) check_frequency(where, "frequency", e.w.data()[i]);
}

Empirical parse_family(Spelling& sp, std::string_view where, const Empirical*) {
  const auto path = sp.take_text("path");
  sp.finish("path");
  if (!path || path->empty()) throw InputError(fmt::format("{}: no file name (spelling: file:PATH)", where));
  return read_frequency_file(*path);
}

PhiPsiVar values_at(const Empirical& e, std::span<const double> lag, bool with_var) {
  // cos u_r with u_r = Dp . w_r (the random sign does not change cos): Phi is their mean, 1 - cos u_r =
  // 2 sin^2(u_r/2) =: h_r, and Var cos u = mean (h_r - mean h)^2 in two passes (exact even when all h_r agree).
  const auto n = static_cast<std::size_t>(e.w.rows());
  std::vector<double> h(n);
  double phi = 0, psi = 0;
  for (std::size_t r = 0; r < n; ++r) {
    double u = 0;
    for (Eigen::Index j = 0; j < e.w.cols(); ++j) u += lag[static_cast<std::size_t>(j)] * e.w(static_cast<Eigen::Index>(r), j);
    if (!std::isfinite(u)) overflowing_phase(spelling(e), lag, "Dp . w");
    const double half = std::sin(0.5 * u);
    h[r] = 2 * half * half;
    phi += std::cos(u);
    psi += h[r];
  }
  phi /= static_cast<double>(n);
  psi /= static_cast<double>(n);
  double var = 0;
  if (with_var) {
    for (double hr : h) var += (hr - psi) * (hr - psi);
    var /= static_cast<double>(n);
  }
  return {phi, psi, with_var ? var : std::numeric_limits<double>::quiet_NaN()};
}

double kernel_work(const Empirical& e) { return 8 * static_cast<double>(e.w.cols()) * static_cast<double>(e.w.rows()); }

void sample(const Empirical& e, Rng& rng, std::size_t n, double* w) {
  const std::size_t k = static_cast<std::size_t>(e.w.cols());
  const auto rows = static_cast<std::uint64_t>(e.w.rows());
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = static_cast<Eigen::Index>(rng.below(rows));
    const double sign = (rng.next() >> 63) ? -1.0 : 1.0;
    for (std::size_t j = 0; j < k; ++j) w[j * n + i] = sign * e.w(r, static_cast<Eigen::Index>(j));
  }
}

QuantileFunction quantile_function(const Empirical& e) {
  std::vector<double> sorted;
  for (Eigen::Index r = 0; r < e.w.rows(); ++r) {
    sorted.push_back(e.w(r, 0));
    sorted.push_back(-e.w(r, 0));
  }
  std::sort(sorted.begin(), sorted.end());
  return [sorted](double u) {
    const auto i = static_cast<std::size_t>(u * static_cast<double>(sorted.size()));
    return sorted[std::min(i, sorted.size() - 1)];
  };
}

double pdf(const Empirical& e, std::span<const double>) {
  throw InputError(fmt::format("frequency file {} is a discrete spectrum: it has no density", quote(e.source)));
}

Empirical wrong_density(const Empirical& e) {
  Empirical out = e;
  out.w *= 2;
  out.source += " (doubled)";
  return out;
}

}  // namespace spectral

spectral::Empirical parse_frequency_text(std::string_view text, std::string_view source) {
  spectral::Empirical e;
  e.source = std::string(source);
  std::vector<double> values;
  std::size_t cols = 0, rows = 0, line_no = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    std::size_t n = 0;
    std::size_t pos = 0;
    while (pos < line.size()) {
      const auto start = line.find_first_not_of(" \t,", pos);
      if (start == std::string_view::npos) break;
      auto end = line.find_first_of(" \t,", start);
      if (end == std::string_view::npos) end = line.size();
      const std::string_view token = line.substr(start, end - start);
      const auto v = parse_double(token);
      if (!v || !(std::abs(*v) <= spectral::kMaxMagnitude))
        throw InputError(fmt::format("frequency file {}: line {} = {} (must be a number of magnitude at most 1e300)",
                                     quote(source), line_no, quote(token)));
      values.push_back(*v);
      ++n;
      pos = end;
    }
    if (n == 0)
      throw InputError(fmt::format("frequency file {}: line {} = {} (must be a row of numbers, a blank line or a # "
                                   "comment)", quote(source), line_no, quote(line)));
    if (rows == 0) {
      cols = n;
      if (cols > static_cast<std::size_t>(kMaxDims))
        throw InputError(fmt::format("frequency file {}: line {} = {} columns (must be at most {})", quote(source), line_no, n,
                                     kMaxDims));
    } else if (n != cols) {
      throw InputError(fmt::format("frequency file {}: line {} = {} values (must be {}, as the first row: rows have equal "
                                   "length)", quote(source), line_no, n, cols));
    }
    ++rows;
  }
  if (rows == 0) throw InputError(fmt::format("frequency file {}: rows = 0 (must be at least one row of numbers)", quote(source)));
  e.w.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) e.w(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = values[r * cols + c];
  return e;
}

spectral::Empirical read_frequency_file(const std::string& path) {
  return parse_frequency_text(read_file(path, "frequency file"), path);
}

}  // namespace ropekit
