// ropekit.precision: `ropekit precision` from Python (lib/ropekit/precision/precision_request.hpp), columns named as
// the command's CSV, numpy arrays.
#include "bindings.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ropekit/precision/precision_request.hpp"

namespace ropekit::bindings {

namespace {

// With a tolerance: the positions as segments (a str "start:stop[:step],..." is never expanded, so the whole range
// 0:2147483648 can be searched; an array gives one segment per value, in order), one row per quantity.
py::dict first_positions(const PrecisionRun& run, const std::string& command, const py::object& positions_in) {
  std::vector<LagStream::Segment> segments;
  if (positions_in.is_none()) {  // every position whose query (p + lag) is one too
    const double top = run.lags.empty() ? 0 : *std::max_element(run.lags.begin(), run.lags.end());
    segments.push_back({0, 1, (std::int64_t{1} << 31) - static_cast<std::int64_t>(top)});
  } else if (py::isinstance<py::str>(positions_in)) {
    segments = LagStream(positions_in.cast<std::string>(), Where::options(command), "positions").segments();
  } else {
    const Lags p = to_lags(positions_in, 1, command);
    for (Eigen::Index i = 0; i < p.rows(); ++i) segments.push_back({p(i, 0), 0, 1});
  }
  const auto found = [&] {
    py::gil_scoped_release release;
    return precision_first_positions(run, command, segments);
  }();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> quantity, search;
  std::vector<double> lag, tolerance, position, value;
  std::vector<std::int64_t> evaluated;
  for (const FirstPosition& f : found) {
    quantity.push_back(f.quantity);
    lag.push_back(f.lag.value_or(nan));
    tolerance.push_back(f.tolerance);
    position.push_back(f.position.value_or(nan));
    value.push_back(f.value);
    evaluated.push_back(f.evaluated);
    search.push_back(f.search);
  }
  py::dict d;
  d["quantity"] = py::cast(quantity);
  d["lag"] = column(std::move(lag));
  d["tolerance"] = column(std::move(tolerance));
  d["first_position"] = column(std::move(position));
  d["value"] = column(std::move(value));
  d["positions_evaluated"] = int_column(evaluated);
  d["search"] = py::cast(search);
  return d;
}

// table=True: the held values as float32 arrays (every one is a float32 value), and the tables' bit patterns in
// their dtype, cos_bits / sin_bits (uint16 for bf16 and fp16, uint32 for fp32 tables).
py::dict table_columns(const PrecisionRun& run, std::vector<std::vector<double>> cols) {
  py::dict d;
  d["position"] = int_column(std::vector<std::int64_t>(cols[0].begin(), cols[0].end()));
  d["i"] = int_column(std::vector<std::int64_t>(cols[1].begin(), cols[1].end()));
  for (std::size_t c = 2; c < cols.size(); ++c)
    d[py::str(run.columns[c])] = py::array_t<float>(py::cast(std::vector<float>(cols[c].begin(), cols[c].end())));
  const Dtype t = table_dtype(run.plan.pipeline);
  auto bits = [&](const std::vector<double>& v) -> py::array {
    if (t == Dtype::bf16 || t == Dtype::fp16) {
      py::array_t<std::uint16_t> a(static_cast<py::ssize_t>(v.size()));
      for (std::size_t i = 0; i < v.size(); ++i) a.mutable_at(i) = static_cast<std::uint16_t>(bits_of(t, v[i]));
      return a;
    }
    py::array_t<std::uint32_t> a(static_cast<py::ssize_t>(v.size()));
    for (std::size_t i = 0; i < v.size(); ++i) a.mutable_at(i) = bits_of(t, v[i]);
    return a;
  };
  d["cos_bits"] = bits(cols[4]);
  d["sin_bits"] = bits(cols[5]);
  return d;
}

}  // namespace

py::dict py_precision(const std::string& encoding, const py::object& positions_in, const std::string& dtype,
                      const std::string& pipeline, bool table, const std::string& inv_freq_dtype,
                      const std::string& angle_dtype, std::optional<double> seq_len, const py::object& lags,
                      std::int64_t trials, std::uint64_t seed, std::optional<double> tolerance) {
  PrecisionRequest r;
  r.command = "ropekit.precision";
  r.encoding = encoding;
  r.dtype = dtype;
  r.pipeline = pipeline;
  r.table = table;
  r.inv_freq_dtype = inv_freq_dtype;
  r.angle_dtype = angle_dtype;
  r.seq_len = seq_len;
  r.trials = trials;
  r.seed = seed;
  r.tolerance = tolerance;
  if (!lags.is_none()) {
    const Lags l = to_lags(lags, 1, r.command);
    r.lags.assign(l.data(), l.data() + l.rows());
  }
  const PrecisionRun run = plan_precision_request(r);
  if (run.tolerance) return first_positions(run, r.command, positions_in);
  const Lags p = positions_in.is_none() ? Lags(Eigen::VectorXd::LinSpaced(1, 0, 0)) : to_lags(positions_in, 1, r.command);
  check_precision_positions(run, r.command, p.data(), static_cast<std::size_t>(p.rows()));
  check_precision_budget(run, r.command, p.rows());
  auto cols = [&] {
    py::gil_scoped_release release;
    return precision_rows(run, p.data(), static_cast<std::size_t>(p.rows()));
  }();
  py::dict d;
  if (run.table) return table_columns(run, std::move(cols));
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (run.columns[c] == "position" || run.columns[c] == "i" || run.columns[c] == "lag") {  // integers, as the command's CSV prints them
      d[py::str(run.columns[c])] = int_column(std::vector<std::int64_t>(cols[c].begin(), cols[c].end()));
    } else {
      d[py::str(run.columns[c])] = column(std::move(cols[c]));
    }
  }
  return d;
}

}  // namespace ropekit::bindings
