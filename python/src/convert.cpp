// Messages in the module's words and conversions between Python objects and the library's values (bindings.hpp).
#include "bindings.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <numbers>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/rope_kernel.hpp"
#include "ropekit/fit/fit_run.hpp"
#include "ropekit/fit/param_fit.hpp"
#include "ropekit/fit/tunable.hpp"
#include "ropekit/lie/generator_io.hpp"
#include "ropekit/lie/lie.hpp"
#include "ropekit/mc/rf_verify.hpp"
#include "ropekit/design/design.hpp"
#include "ropekit/design/inverse_design.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "ropekit/version.hpp"
#include "targets/kernel_table.hpp"
#include "targets/target.hpp"

namespace ropekit::bindings {

std::string pythonise(std::string msg) {
  static const std::pair<const char*, const char*> commands[] = {
      {"ropekit verify master", "ropekit.verify_master"}, {"ropekit lie check", "ropekit.lie_check"},
      {"ropekit fit-params", "ropekit.fit_params"},       {"ropekit kernel", "ropekit.kernel"},
      {"ropekit frequencies", "ropekit.frequencies"},     {"ropekit features", "ropekit.features"},
      {"ropekit design", "ropekit.design"},               {"ropekit fit", "ropekit.fit"},
      {"ropekit model", "ropekit.model"},                 {"ropekit check", "ropekit.check"}};
  for (const auto& [from, to] : commands)
    for (std::size_t at; (at = msg.find(from)) != std::string::npos;) msg.replace(at, std::strlen(from), to);
  static const std::regex option("--([A-Za-z][A-Za-z0-9-]*)");
  std::string out;
  auto it = std::sregex_iterator(msg.begin(), msg.end(), option);
  std::size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    out += msg.substr(last, static_cast<std::size_t>(it->position()) - last);
    std::string name = (*it)[1];
    for (char& c : name)
      if (c == '-') c = '_';
    out += name;
    last = static_cast<std::size_t>(it->position() + it->length());
  }
  return out + msg.substr(last);
}

[[noreturn]] void bad(const std::string& where, const std::string& name, const std::string& value,
                      const std::string& constraint) {
  throw_bad_value(where, name, value, constraint);
}

void check_real(const py::object& o, const std::string& command, const std::string& name) {
  // numpy casts complex to float64 with a ComplexWarning only, dropping the imaginary parts (issue 20 item 14).
  if (const auto a = py::array::ensure(o); a && a.dtype().kind() == 'c')
    bad(command, name, "an array of dtype " + py::str(a.dtype()).cast<std::string>(),
        "real numbers (a complex array would lose its imaginary parts)");
}

Lags to_lags(const py::object& o, int k, const std::string& command, const std::string& name) {
  if (py::isinstance<py::str>(o)) return parse_lags(o.cast<std::string>(), k, Where::options(command), name);
  check_real(o, command, name);
  auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(o);
  if (!a) bad(command, name, py::repr(o).cast<std::string>(), "a lag spelling (\"0:8\") or an array of numbers");
  if (a.ndim() == 0 || a.ndim() == 1) {
    const Eigen::Index n = a.ndim() == 0 ? 1 : a.shape(0);
    if (k == 1) return Eigen::Map<const Eigen::MatrixXd>(a.data(), n, 1);
    if (n == k) return Eigen::Map<const Eigen::MatrixXd>(a.data(), 1, k);  // one lag vector
  }
  if (a.ndim() == 2 && a.shape(1) == k) {
    Lags l(a.shape(0), k);
    for (py::ssize_t i = 0; i < a.shape(0); ++i)
      for (py::ssize_t j = 0; j < k; ++j) l(i, j) = a.at(i, j);
    return l;
  }
  std::string shape;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(a.shape(d));
  bad(command, name, "an array of shape (" + shape + ")",
      k == 1 ? "a 1-D array of lags" : fmt::format("an array of shape (n, {}) for {}-D lags", k, k));
}

std::optional<py::array_t<double>> lag_array(const py::object& o, const std::string& command,
                                             const std::string& name) {
  if (o.is_none() || py::isinstance<py::str>(o)) return std::nullopt;
  check_real(o, command, name);
  auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(o);
  if (!a || a.ndim() > 1) return std::nullopt;
  return a;
}

std::string short_repr(const py::object& o) {
  std::string r = py::repr(o).cast<std::string>();
  return r.size() > 60 ? r.substr(0, 57) + "..." : r;
}

std::vector<std::string> to_strings(const py::object& o, const std::string& command, const std::string& name) {
  if (py::isinstance<py::str>(o)) return {o.cast<std::string>()};
  return cast_arg<std::vector<std::string>>(o, command, name, "a str or a list of str");
}

// A 1-D column of float64 handed to numpy without a copy (the vector moves into a capsule).
py::array column(Eigen::VectorXd v) { return py::cast(std::move(v)); }
py::array column(std::vector<double> v) {
  auto* p = new std::vector<double>(std::move(v));
  py::capsule owner(p, [](void* q) { delete static_cast<std::vector<double>*>(q); });
  return py::array_t<double>(static_cast<py::ssize_t>(p->size()), p->data(), owner);
}
py::array int_column(const std::vector<std::int64_t>& v) {
  py::array_t<std::int64_t> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}
py::array bool_column(const std::vector<bool>& v) {
  py::array_t<bool> a(static_cast<py::ssize_t>(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) a.mutable_data()[i] = v[i];
  return a;
}

// A lag column: a float64 vector for 1-D lags, an (n, k) array for k-D ones.
py::array lag_column(const Lags& lags) {
  if (lags.cols() == 1) return column(Eigen::VectorXd(lags.col(0)));
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> m = lags;
  return py::cast(std::move(m));
}

}  // namespace ropekit::bindings
