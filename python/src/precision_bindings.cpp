// ropekit.precision: `ropekit precision` from Python (lib/ropekit/precision/precision_request.hpp), columns named as
// the command's CSV, numpy arrays.
#include "bindings.hpp"

#include <string>
#include <vector>

#include "ropekit/precision/precision_request.hpp"

namespace ropekit::bindings {

py::dict py_precision(const std::string& encoding, const py::object& positions_in, const std::string& dtype,
                      const std::string& pipeline, bool table, const std::string& inv_freq_dtype,
                      const std::string& angle_dtype, std::optional<double> seq_len, const py::object& lags,
                      std::int64_t trials, std::uint64_t seed) {
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
  if (!lags.is_none()) {
    const Lags l = to_lags(lags, 1, r.command);
    r.lags.assign(l.data(), l.data() + l.rows());
  }
  const PrecisionRun run = plan_precision_request(r);
  const Lags p = positions_in.is_none() ? Lags(Eigen::VectorXd::LinSpaced(1, 0, 0)) : to_lags(positions_in, 1, r.command);
  check_precision_positions(run, r.command, p.data(), static_cast<std::size_t>(p.rows()));
  check_precision_budget(run, r.command, p.rows());
  auto cols = [&] {
    py::gil_scoped_release release;
    return precision_rows(run, p.data(), static_cast<std::size_t>(p.rows()));
  }();
  py::dict d;
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
