// ropekit.precision: `ropekit precision` from Python (lib/ropekit/commands/precision_request.hpp), columns named as
// the command's CSV, numpy arrays.
#include "bindings.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ropekit/commands/precision_request.hpp"

namespace ropekit::bindings {

namespace {

// With a tolerance, one row per quantity: the first position, its interval, the value there, the search's size.
py::dict first_positions(const PrecisionRun& run) {
  const auto found = interruptible([&] { return precision_first_positions(run); });
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> quantity, search, note;
  std::vector<double> lag, tolerance, position, low, high, value;
  std::vector<std::int64_t> evaluated;
  for (const FirstPosition& f : found) {
    quantity.push_back(f.quantity);
    lag.push_back(f.lag.value_or(nan));
    tolerance.push_back(f.tolerance);
    position.push_back(f.position.value_or(nan));
    low.push_back(f.position_low.value_or(nan));
    high.push_back(f.position_high.value_or(nan));
    value.push_back(f.value);
    evaluated.push_back(f.evaluated);
    search.push_back(f.search);
    note.push_back(f.note);
  }
  py::dict d;
  d["quantity"] = py::cast(quantity);
  d["lag"] = column(std::move(lag));
  d["tolerance"] = column(std::move(tolerance));
  d["first_position"] = column(std::move(position));
  d["first_position_low"] = column(std::move(low));
  d["first_position_high"] = column(std::move(high));
  d["value"] = column(std::move(value));
  d["positions_evaluated"] = int_column(evaluated);
  d["search"] = py::cast(search);
  d["note"] = py::cast(note);
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

namespace {

py::dict precision_of(const std::string& encoding, const std::optional<ModelLayer>& model,
                      const py::object& positions_in, const std::string& dtype, const std::optional<std::string>& pipeline, bool table, const std::string& inv_freq_dtype,
                      const std::string& angle_dtype, std::optional<double> seq_len, const py::object& lags,
                      std::int64_t trials, std::uint64_t seed, std::optional<double> tolerance) {
  PrecisionRequest r;
  r.command = "ropekit.precision";
  r.encoding = encoding;
  r.model = model;
  r.dtype = dtype;
  r.pipeline = pipeline.value_or("");
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
  // The positions as segments, sized and checked by the request before any is expanded: a str "start:stop[:step],..."
  // is counted (a range of 0:2147483648 is searched by a tolerance, or refused for rows past the budgets, without
  // being allocated); an array gives one segment per value, in order; None: position 0 (with a tolerance, every
  // position).
  std::optional<LagStream> text;
  Lags given;
  if (py::isinstance<py::str>(positions_in)) {
    text.emplace(positions_in.cast<std::string>(), Where::options(r.command), "positions");
    r.positions = text->segments();
  } else if (!positions_in.is_none()) {
    given = to_lags(positions_in, 1, r.command, "--positions");
    r.positions.emplace();
    for (Eigen::Index i = 0; i < given.rows(); ++i) r.positions->push_back({given(i, 0), 0, 1});
  } else if (!tolerance) {
    r.positions = std::vector<LagStream::Segment>{{0, 0, 1}};
  }
  r.in_memory = true;
  const PrecisionRun run = interruptible([&] { return plan_precision_request(r); });
  for (const std::string& note : run.notes) {  // as the command line prints them on stderr
    const std::string text = fmt::format("{}: note: {}", r.command, note);
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) throw py::error_already_set();  // warnings as errors
  }
  if (run.tolerance) return first_positions(run);
  std::vector<double> expanded;
  if (text) {
    expanded.resize(static_cast<std::size_t>(run.count));
    text->next(expanded.data(), expanded.size());
  } else if (!positions_in.is_none()) {
    expanded.assign(given.data(), given.data() + given.rows());
  } else {
    expanded.push_back(0);
  }
  auto cols = interruptible([&] { return precision_rows(run, expanded.data(), expanded.size()); });
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

}  // namespace

py::dict py_precision(const py::object& encoding, const py::object& positions_in, const std::string& dtype,
                      const std::optional<std::string>& pipeline, bool table, const std::string& inv_freq_dtype,
                      const std::string& angle_dtype, std::optional<double> seq_len, const py::object& lags,
                      std::int64_t trials, std::uint64_t seed, std::optional<double> tolerance,
                      const py::object& model, const py::object& layer_type) {
  const auto layer = bound_model_layer("ropekit.precision", "--encoding", encoding, model, layer_type);
  if (!layer && encoding.is_none()) bad("ropekit.precision", "--encoding", "None", "given, or model");
  const std::string text = layer ? layer->encoding : cast_arg<std::string>(encoding, "ropekit.precision", "--encoding", "a str");
  py::dict d = precision_of(text, layer, positions_in, dtype, pipeline, table, inv_freq_dtype, angle_dtype, seq_len, lags,
                            trials, seed, tolerance);
  return layer ? with_layer_type(d, layer->label) : d;
}

py::dict py_list_pipelines() {
  const auto& columns = pipeline_list_columns();
  std::vector<std::vector<std::string>> values(columns.size());
  for (const auto& row : pipeline_list_rows())
    for (std::size_t j = 0; j < columns.size(); ++j) values[j].push_back(row[j]);
  py::dict d;
  for (std::size_t j = 0; j < columns.size(); ++j) d[columns[j].c_str()] = values[j];
  return d;
}

}  // namespace ropekit::bindings
