// ropekit.check: an encoding's exactness over a window of lags, its verdicts and RoFormer's long-term decay bound
// (as `ropekit check`), through the library's request (commands/check_request.hpp).
#include "bindings.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ropekit/commands/check_request.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit::bindings {

py::dict py_check(const py::object& encoding, const py::object& window, std::optional<double> seq_len,
                  const py::object& model, const py::object& layer_type) {
  CheckRequest request;
  const std::string& command = request.command;
  if (!model.is_none() || !layer_type.is_none())
    request.layers = bound_model_layers(command, "--encoding", encoding, model, layer_type, true);
  if (encoding.is_none() && request.layers.empty()) bad(command, "--encoding", "None", "given, or model");
  if (request.layers.empty()) request.encodings = to_strings(encoding, command, "--encoding");
  for (const auto& l : request.layers) request.encodings.push_back(l.encoding);
  if (request.encodings.empty()) bad(command, "--encoding", "[]", "at least one spelling");
  // The window as the command line spells it ("0,1,10", "0:100:10"), or as numbers (a scalar or a 1-D array).
  if (py::isinstance<py::str>(window)) {
    request.window_text = window.cast<std::string>();
  } else if (!window.is_none()) {
    const Lags w = to_lags(window, 1, command, "--window");
    request.window.emplace(w.data(), w.data() + w.rows());
  }
  request.seq_len = seq_len;
  const CheckPlan plan = interruptible([&] { return plan_check(request); });
  interruptible([&] { return check_check_budget(request, plan); });
  // The notes as UserWarnings "ropekit.check: note: <text>", each once, as the command line prints them on stderr.
  for (const Encoding& e : plan.encodings) warn_notes("check", e);
  for (const std::string& note : plan.notes) {
    const std::string text = "ropekit.check: note: " + note;
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) throw py::error_already_set();
  }
  const std::vector<CheckRow> rows = interruptible([&] { return check_rows(request, plan); });
  // The command line's columns: text as lists of str, lag and value as float64 (an empty lag cell NaN, a verdict
  // 1.0 for true and 0.0 for false).
  std::vector<std::string> layer, enc, quantity;
  std::vector<double> lag, value;
  for (const CheckRow& r : rows) {
    layer.push_back(r.layer_type);
    enc.push_back(r.encoding);
    quantity.push_back(r.quantity);
    lag.push_back(r.lag.value_or(std::numeric_limits<double>::quiet_NaN()));
    value.push_back(std::holds_alternative<bool>(r.value) ? (std::get<bool>(r.value) ? 1.0 : 0.0)
                                                          : std::get<double>(r.value));
  }
  py::dict d;
  if (!request.layers.empty()) d["layer_type"] = layer;
  d["encoding"] = enc;
  d["quantity"] = quantity;
  d["lag"] = column(std::move(lag));
  d["value"] = column(std::move(value));
  return d;
}

}  // namespace ropekit::bindings
