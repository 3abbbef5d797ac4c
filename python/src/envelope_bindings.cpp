// ropekit.envelope: a curve summarised per pixel column (lib/ropekit/core/envelope.hpp), what ropekit.plot draws
// and what the command line's SVG figures are made of: any number of points down to one row per column.
#include "bindings.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "ropekit/core/envelope.hpp"
#include "ropekit/core/error.hpp"

namespace ropekit::bindings {

py::dict py_envelope(const py::object& x_in, const py::object& y_in, int columns, std::optional<double> lo,
                     std::optional<double> hi, bool log, bool median) {
  const std::string where = "ropekit envelope";
  check_real(x_in, where, "--x");
  check_real(y_in, where, "--y");
  const auto x = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(x_in);
  const auto y = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(y_in);
  if (!x || x.ndim() != 1) bad(where, "--x", short_repr(x_in), "a 1-D array of numbers");
  if (!y || y.ndim() != 1) bad(where, "--y", short_repr(y_in), "a 1-D array of numbers");
  if (x.size() != y.size())
    bad(where, "--y", fmt::format("{} values", y.size()), fmt::format("as many as x ({})", x.size()));
  if (!(columns >= 1 && columns <= 1000000)) bad(where, "--columns", std::to_string(columns), "an integer in [1, 1000000]");
  // The axis: the given ends, else the range of the x the axis can draw (> 0 on a log axis).
  const double* xs = x.data();
  const double* ys = y.data();
  const auto n = static_cast<std::size_t>(x.size());
  double dlo = std::numeric_limits<double>::infinity(), dhi = -dlo;
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(xs[i]) && (!log || xs[i] > 0)) dlo = std::min(dlo, xs[i]), dhi = std::max(dhi, xs[i]);
  XAxis axis{lo.value_or(dlo), hi.value_or(dhi), log};
  if (!(std::isfinite(axis.lo) && std::isfinite(axis.hi) && axis.hi > axis.lo && (!log || axis.lo > 0)))
    bad(where, "--lo", fmt::format("{} with hi = {}", format_number(axis.lo), format_number(axis.hi)),
        log ? "a range 0 < lo < hi (given, or the x > 0 the data has)" : "a range lo < hi (given, or the data's x)");
  SeriesEnvelope e(axis, columns, median);
  {
    py::gil_scoped_release release;
    for (std::size_t i = 0; i < n; ++i) e.add(xs[i], ys[i]);
  }
  // One row per column holding a point or a gap (a gap row: NaN values, so matplotlib breaks the line there).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> cx, mean, mn, mx, mnp, gmean, med, medp, rank_error;
  std::vector<std::int64_t> count;
  for (std::size_t c = 0; c < e.columns().size(); ++c) {
    const EnvelopeColumn& k = e.columns()[c];
    if (k.count == 0 && !k.gap) continue;
    const double u = (static_cast<double>(c) + 0.5) / static_cast<double>(columns);  // the column's centre
    const double centre = log ? std::pow(10.0, std::log10(axis.lo) + u * (std::log10(axis.hi) - std::log10(axis.lo)))
                              : axis.lo + u * (axis.hi - axis.lo);
    const bool any = k.count > 0, pos = k.positive > 0;
    cx.push_back(any ? k.x_sum / static_cast<double>(k.count) : centre);
    mean.push_back(any ? k.y_sum / static_cast<double>(k.count) : nan);
    mn.push_back(any ? k.min : nan);
    mx.push_back(any ? k.max : nan);
    mnp.push_back(pos ? k.min_positive : nan);
    gmean.push_back(pos ? std::pow(10.0, k.log_sum / static_cast<double>(k.positive)) : nan);
    if (median) {
      med.push_back(column_median(k, false));
      medp.push_back(column_median(k, true));
      rank_error.push_back(k.values.rank_error());
    }
    count.push_back(k.count);
  }
  py::dict d;
  d["x"] = column(std::move(cx));
  d["mean"] = column(std::move(mean));
  d["min"] = column(std::move(mn));
  d["max"] = column(std::move(mx));
  d["min_positive"] = column(std::move(mnp));
  d["geometric_mean"] = column(std::move(gmean));
  d["count"] = int_column(count);
  if (median) {
    d["median"] = column(std::move(med));
    d["median_positive"] = column(std::move(medp));
    d["median_rank_error"] = column(std::move(rank_error));
  }
  d["outside"] = e.outside();
  return d;
}

}  // namespace ropekit::bindings
