// The Python module `ropekit` (issue 10): pybind11 over the library (lib/ropekit, targets/), nothing of the command
// line. Spellings are the command line's strings; every table comes back as a dict of columns named as the command
// line's CSV columns (numbers as float64 / int64 numpy arrays, text as lists of str), so pandas.DataFrame(d) is the
// CSV. Bad input raises ValueError with the command line's one-line message, its command written as the Python
// function ("ropekit kernel:" -> "ropekit.kernel:") and its options as the keyword arguments ("--seq-len" ->
// "seq_len"). Calls that can run long compute on a worker thread with the GIL released while the calling thread
// polls for Ctrl-C, which cancels the work between chunks (ropekit/core/cancel.hpp) and raises KeyboardInterrupt.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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
#include "ropekit/spectral/design.hpp"
#include "ropekit/spectral/inverse_design.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "ropekit/version.hpp"
#include "targets/kernel_table.hpp"
#include "targets/target.hpp"

namespace py = pybind11;
using namespace ropekit;

namespace {

// ---------------------------------------------------------------------------------------------
// Messages and cancellation

// "ropekit verify master: --draw-from = ..." -> "ropekit.verify_master: draw_from = ...".
std::string pythonise(std::string msg) {
  static const std::pair<const char*, const char*> commands[] = {
      {"ropekit verify master", "ropekit.verify_master"}, {"ropekit lie check", "ropekit.lie_check"},
      {"ropekit fit-params", "ropekit.fit_params"},       {"ropekit kernel", "ropekit.kernel"},
      {"ropekit frequencies", "ropekit.frequencies"},     {"ropekit features", "ropekit.features"},
      {"ropekit design", "ropekit.design"},               {"ropekit fit", "ropekit.fit"}};
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

// Runs f() on a worker thread with the GIL released; the calling thread wakes every 50 ms, takes the GIL and runs
// Python's signal handlers. A KeyboardInterrupt (or any exception a handler raises) sets the cancel flag, which the
// library's loops read between chunks; the worker is joined and the Python exception re-raised. Outside the main
// thread (Dask workers) PyErr_CheckSignals does nothing and the call simply runs to its end.
template <class F>
auto interruptible(F&& f) -> decltype(f()) {
  using R = decltype(f());
  std::atomic<bool> cancel{false};
  std::optional<R> result;
  std::exception_ptr error;
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    std::packaged_task<void()> task([&] {
      const CancelScope scope(&cancel);
      try {
        result.emplace(f());
      } catch (...) {
        error = std::current_exception();
      }
    });
    std::future<void> done = task.get_future();
    std::thread worker(std::move(task));
    while (done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {
        interrupted = true;
        cancel = true;
        break;
      }
    }
    worker.join();
  }
  if (interrupted) throw py::error_already_set();  // the KeyboardInterrupt the handler raised
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

// ---------------------------------------------------------------------------------------------
// Arguments

// Lags as the command line spells them ("0,1,10", "0:8", "1,0;0,2") or as numbers: a scalar, a 1-D array (k = 1) or
// an (n, k) array.
Lags to_lags(const py::object& o, int k, const std::string& command, const std::string& name = "--lags") {
  if (py::isinstance<py::str>(o)) return parse_lags(o.cast<std::string>(), k, Where::options(command), name);
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

std::vector<std::string> to_strings(const py::object& o) {
  if (py::isinstance<py::str>(o)) return {o.cast<std::string>()};
  return o.cast<std::vector<std::string>>();
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

// ---------------------------------------------------------------------------------------------
// Encodings: kernel, frequencies, features

py::dict py_kernel(const std::string& text, const py::object& lags_in, double rho, std::optional<double> seq_len) {
  const std::string command = "ropekit kernel";
  const Where where = Where::options(command);
  const Encoding e = parse_encoding_for(command, text);
  if (!is_relative(e))
    bad(command, "--encoding", "'" + text + "'",
        "a relative encoding: sinusoidal is absolute and has no kernel of the lag (`ropekit check` reports its "
        "relativity defect)");
  if (!(rho >= -1 && rho <= 1)) throw_bad_value(where, "rho", format_number(rho), "in [-1, 1]");
  if (seq_len) check_positive(where, "seq_len", *seq_len);
  const int k = lag_dims(e);
  if (lags_in.is_none() && k != 1)
    throw_bad_value(where, "lags", "(missing)",
                    fmt::format("given for {}-D lags, e.g. --lags '1,0;0,2' (no default for k-D encodings)", k));
  const Lags lags = lags_in.is_none() ? parse_lags("0,1,10,100,1000", 1) : to_lags(lags_in, k, command);
  const bool rf = std::holds_alternative<enc::RfRope>(e.value);
  if (rf) check_rf_lag_range(where, std::span<const double>(lags.data(), static_cast<std::size_t>(lags.size())), " for rf-rope");
  const auto plain = plain_rope(e);
  const Eigen::Index n = lags.rows();
  Eigen::VectorXd kern(n), var(n), expected(rf ? n : 0), fvar(rf ? n : 0), sres(plain ? n : 0), cont(plain ? n : 0),
      csin(plain ? n : 0);
  interruptible([&] {
    const auto kr = for_encoding(command, text, [&] { return kernel_rows(e, lags, rho, seq_len); });
    for (Eigen::Index i = 0; i < n; ++i) {
      const KernelRow& r = kr[static_cast<std::size_t>(i)];
      if (!std::isfinite(r.kernel) || !std::isfinite(r.content_variance)) {
        const Eigen::VectorXd lag = lags.row(i).transpose();
        throw_bad_value(where, "lags", lag_text(std::span<const double>(lag.data(), static_cast<std::size_t>(k))),
                        fmt::format("lags at which G is finite for '{}' (the kernel or the content variance "
                                    "overflows float64 there)",
                                    text));
      }
      kern[i] = r.kernel;
      var[i] = r.content_variance;
      if (rf) expected[i] = r.expected_kernel, fvar[i] = r.frequency_variance;
      if (plain) {
        const RopeKernelValues v = rope_kernel(*plain, lags(i, 0));
        sres[i] = v.sine_residual, cont[i] = v.continuum, csin[i] = v.continuum_sine;
      }
    }
    return 0;
  });
  py::dict d;
  d["encoding"] = spelling(e);
  d["lag"] = lag_column(lags);
  d["kernel"] = column(std::move(kern));
  d["content_variance"] = column(std::move(var));
  if (rf) {
    d["expected_kernel"] = column(std::move(expected));
    d["frequency_variance"] = column(std::move(fvar));
  }
  if (plain) {
    d["sine_residual"] = column(std::move(sres));
    d["continuum"] = column(std::move(cont));
    d["continuum_sine"] = column(std::move(csin));
  }
  return d;
}

py::dict py_frequencies(const std::string& text, std::optional<double> seq_len, bool float32,
                        const std::string& convention_text) {
  const std::string command = "ropekit frequencies";
  const Where where = Where::options(command);
  const Encoding e = parse_encoding_for(command, text);
  Convention convention;
  if (convention_text == "huggingface") convention = Convention::huggingface;
  else if (convention_text == "ggml") convention = Convention::ggml;
  else throw_bad_value(where, "convention", "'" + convention_text + "'", "huggingface or ggml");
  if (seq_len) check_positive(where, "seq_len", *seq_len);
  if (!has_frequencies(e))
    bad(command, "--encoding", "'" + text + "'",
        "an encoding with rotary frequencies (rope, rope-freqs, rope-matched, xpos, rf-rope, damped, jordan, "
        "jordan-scaled, sinusoidal, nd with torus generators, or a direct sum with one of them)");
  const std::vector<const Encoding*> leaves = rotary_leaves(e);
  const bool sum = std::holds_alternative<enc::DirectSum>(e.value);
  const int k = lag_dims(e);
  std::vector<std::int64_t> part, index;
  std::vector<std::vector<double>> theta(static_cast<std::size_t>(k)), theta32(static_cast<std::size_t>(k));
  std::vector<double> wavelength, factor;
  for (std::size_t p = 0; p < leaves.size(); ++p) {
    const FrequencyTable f64 = for_encoding(command, text, [&] { return frequencies(*leaves[p], seq_len, convention, false); });
    FrequencyTable f32;
    if (float32) f32 = for_encoding(command, text, [&] { return frequencies(*leaves[p], seq_len, convention, true); });
    for (Eigen::Index i = 0; i < f64.theta.rows(); ++i) {
      part.push_back(static_cast<std::int64_t>(p));
      index.push_back(i);
      for (int j = 0; j < k; ++j) {
        theta[static_cast<std::size_t>(j)].push_back(j < f64.theta.cols() ? f64.theta(i, j) : 0.0);
        if (float32) theta32[static_cast<std::size_t>(j)].push_back(j < f32.theta.cols() ? f32.theta(i, j) : 0.0);
      }
      wavelength.push_back(2 * std::numbers::pi / f64.theta.row(i).norm());
      factor.push_back(f64.attention_factor);
    }
  }
  py::dict d;
  d["encoding"] = spelling(e);
  if (sum) d["part"] = int_column(part);
  d["i"] = int_column(index);
  auto axes = [&](const std::string& stem, std::vector<std::vector<double>>& cols) {
    if (k == 1) d[py::str(stem)] = column(std::move(cols[0]));
    else
      for (int j = 0; j < k; ++j) d[py::str(fmt::format("{}_{}", stem, j))] = column(std::move(cols[static_cast<std::size_t>(j)]));
  };
  axes("theta", theta);
  d["wavelength"] = column(std::move(wavelength));
  d["attention_factor"] = column(std::move(factor));
  if (float32) axes("theta_float32", theta32);
  return d;
}

py::tuple py_features(const std::string& text, const py::object& lags_in) {
  const std::string command = "ropekit features";
  const Where where = Where::options(command);
  const Encoding e = parse_encoding_for(command, text);
  if (!is_relative(e))
    bad(command, "--encoding", "'" + text + "'",
        "a relative encoding: sinusoidal is absolute and has no relative feature basis");
  const int k = lag_dims(e);
  if (lags_in.is_none() && k != 1)
    throw_bad_value(where, "lags", "(missing)",
                    fmt::format("given for {}-D lags, e.g. --lags '1,0;0,2' (no default for k-D encodings)", k));
  const Lags lags = lags_in.is_none() ? parse_lags("0:8", 1) : to_lags(lags_in, k, command);
  if (k == 1)
    for (Eigen::Index i = 0; i < lags.rows(); ++i)
      if (!(lags(i, 0) >= 0)) throw_bad_value(where, "lags", format_number(lags(i, 0)), "finite and >= 0 (causal lags)");
  Features f = interruptible([&] { return for_encoding(command, text, [&] { return features(e, lags); }); });
  for (Eigen::Index i = 0; i < f.values.rows(); ++i)
    if (!f.values.row(i).allFinite()) {
      const Eigen::VectorXd lag = lags.row(i).transpose();
      throw_bad_value(where, "lags", lag_text(std::span<const double>(lag.data(), static_cast<std::size_t>(k))),
                      fmt::format("lags at which every feature of '{}' is finite (a column overflows float64 there)",
                                  text));
    }
  // rows = lags, cols = features; column-major, as Eigen holds it (numpy sees a Fortran-ordered array, no copy).
  return py::make_tuple(py::cast(std::move(f.values)), py::cast(f.names));
}

// ---------------------------------------------------------------------------------------------
// fit

struct FitRun {
  std::vector<std::string> encodings, methods, targets;
  int train_context = 0;
  std::vector<int> eval_contexts;
  double ridge = 1e-4;
  std::vector<std::int64_t> seeds{0};
  int num_freqs = 16, head_dim = 64, freq_index = 3, second_freq_index = 5, threads = 0;
  double theta = 1e4, gamma = 1e-4;
  std::string tau = "bounded";
};

// `ropekit fit` without --config, from the same options (fit_run.hpp fit_config, as the command line's).
FitConfig fit_config(const FitRun& a) {
  const std::string command = "ropekit fit";
  const Where where = Where::options(command);
  if (a.encodings.empty() && a.methods.empty())
    throw InputError(command + ": no --encodings or --methods (must give at least one encoding or method)");
  if (a.tau != "bounded" && a.tau != "raw") throw_bad_value(where, "tau", "'" + a.tau + "'", "bounded or raw");
  if (a.train_context < 1)
    throw_bad_value(where, "train_context", std::to_string(a.train_context),
                    fmt::format("an integer in [1, {}]", FitConfig::kMaxLength));
  for (int T : a.eval_contexts)
    if (T < 1)
      throw_bad_value(where, "eval_contexts", std::to_string(T), fmt::format("an integer in [1, {}]", FitConfig::kMaxLength));
  for (auto s : a.seeds)
    if (s < 0) throw_bad_value(where, "seed", std::to_string(s), "an integer in [0, 9223372036854775807]");
  if (a.threads < 0) throw_bad_value(where, "threads", std::to_string(a.threads), "an integer >= 0 (0: all cores)");
  FitOptions o;
  o.methods = a.methods;
  o.encodings = a.encodings;
  o.targets = a.targets;
  o.basis.num_freqs = a.num_freqs;
  o.basis.head_dim = a.head_dim;
  o.basis.base = a.theta;
  o.basis.gamma = a.gamma;
  o.basis.train_context = a.train_context;
  o.basis.bounded_tau = a.tau == "bounded";
  o.eval_contexts = a.eval_contexts;
  o.seeds = a.seeds;
  o.ridge = a.ridge;
  o.freq_index = a.freq_index;
  o.second_freq_index = a.second_freq_index;
  o.encodings_key = "--encodings";
  return ropekit::fit_config(o);
}

py::dict fit_rows_dict(const std::vector<FitRow>& rows) {
  std::vector<std::int64_t> seed, context, n_features, n_train, rank;
  std::vector<std::string> target, method, split;
  std::vector<double> mse, r2, cond;
  for (const auto& r : rows) {
    seed.push_back(r.seed);
    target.push_back(r.target);
    method.push_back(r.method);
    context.push_back(r.context);
    split.push_back(r.split);
    n_features.push_back(r.n_features);
    n_train.push_back(r.n_train);
    mse.push_back(r.mse);
    r2.push_back(r.r2);
    cond.push_back(r.cond);
    rank.push_back(r.rank);
  }
  py::dict d;
  d["seed"] = int_column(seed);
  d["target"] = target;
  d["method"] = method;
  d["context"] = int_column(context);
  d["split"] = split;
  d["n_features"] = int_column(n_features);
  d["n_train"] = int_column(n_train);
  d["mse"] = column(std::move(mse));
  d["r2"] = column(std::move(r2));
  d["cond"] = column(std::move(cond));
  d["rank"] = int_column(rank);
  return d;
}

py::dict py_fit(const py::object& encodings, const py::object& targets, int train_context,
                const std::vector<int>& eval_contexts, double ridge, const py::object& methods,
                const std::vector<std::int64_t>& seeds, int num_freqs, int head_dim, double theta, double gamma,
                const std::string& tau, int target_freq_index, int second_freq_index, int threads) {
  FitRun a;
  a.encodings = encodings.is_none() ? std::vector<std::string>{} : to_strings(encodings);
  a.targets = targets.is_none() ? std::vector<std::string>{} : to_strings(targets);
  a.methods = methods.is_none() ? std::vector<std::string>{} : to_strings(methods);
  a.train_context = train_context;
  a.eval_contexts = eval_contexts;
  a.ridge = ridge;
  a.seeds = seeds;
  a.num_freqs = num_freqs;
  a.head_dim = head_dim;
  a.theta = theta;
  a.gamma = gamma;
  a.tau = tau;
  a.freq_index = target_freq_index;
  a.second_freq_index = second_freq_index;
  a.threads = threads;
  const std::vector<FitRow> rows = interruptible([&] {
    const FitConfig c = fit_config(a);
    return run_fixed_basis(c, a.threads);
  });
  return fit_rows_dict(rows);
}

// ---------------------------------------------------------------------------------------------
// fit_params (tuning an encoding; cli/cli_fit_params.cpp run_tuning) and fit_spectrum

py::tuple py_fit_params(const std::string& encoding_text, const py::object& free_in, const py::object& targets_in,
                        int train_context, const std::vector<int>& eval_contexts, double ridge, int starts,
                        std::uint64_t seed, int max_iterations, int head_dim, int num_freqs, double theta, double gamma,
                        int freq_index, int second_freq_index) {
  const std::string command = "ropekit fit-params";
  const Where where = Where::options(command);
  const std::vector<std::string> free = to_strings(free_in);
  if (free.empty()) throw InputError(command + ": --free is missing (must name the parameters to tune)");
  if (!(ridge > 0) || !std::isfinite(ridge))
    throw_bad_value(where, "ridge", format_number(ridge),
                    "a finite number > 0: the projected problem needs [X; sqrt(ridge) I] of full rank");
  check_in_range(where, "train_context", train_context, 1, 1 << 20);
  check_in_range(where, "starts", starts, 1, 1000);
  check_in_range(where, "max_iterations", max_iterations, 1, 100000);
  for (int T : eval_contexts) check_in_range(where, "eval_contexts", T, 1, 1 << 20);
  int max_length = train_context;
  for (int T : eval_contexts) max_length = std::max(max_length, T);
  const std::vector<std::string> targets = targets_in.is_none() ? toy_targets() : to_strings(targets_in);
  EncodingDefaults defaults;
  defaults.dim = head_dim;
  defaults.base = theta;
  defaults.count = num_freqs;
  defaults.gamma = gamma;
  defaults.L = train_context;
  const Encoding e = parse_encoding(encoding_text, Where(command + ": --encoding"), defaults);
  if (lag_dims(e) != 1 || !is_relative(e))
    throw_bad_value(where, "encoding", "'" + encoding_text + "'", "a relative encoding of 1-D lags");
  const TunableEncoding tunable = make_tunable(e, free, where);

  // Each target's values on its lags (a target family on 0..T_max-1, a data: table, a kernel:ENCODING).
  struct Resolved {
    std::string name;
    Eigen::VectorXd lags, y;
  };
  std::vector<Resolved> resolved;
  const Eigen::VectorXd grid = Eigen::VectorXd::LinSpaced(max_length, 0, max_length - 1);
  for (const auto& name : targets) {
    Resolved r{name, {}, {}};
    if (name.rfind("data:", 0) == 0) {
      const auto table = read_kernel_table(name.substr(5), command + ": --target");
      r.lags = table.lag, r.y = table.value;
    } else if (name.rfind("kernel:", 0) == 0) {
      const Encoding t = parse_encoding(name.substr(7), Where(command + ": --target"), defaults);
      if (lag_dims(t) != 1 || !is_relative(t))
        throw_bad_value(where, "target", "'" + name + "'", "the kernel of a relative encoding of 1-D lags");
      r.lags = grid, r.y = kernel(t, Lags(grid));
    } else {
      const Target target = parse_target(name);
      TargetParams p;
      p.base = theta, p.head_dim = head_dim, p.train_context = train_context, p.gamma = gamma;
      p.freq_index = freq_index, p.second_freq_index = second_freq_index;
      p.validate(where);
      check_target_params(target, p, name);
      check_target_range(target, p, max_length - 1, name);
      r.lags = grid, r.y = target_values(target, p, grid);
    }
    if (r.lags.size() == 0 || r.lags[0] >= train_context)
      throw_bad_value(where, "target", "'" + name + "'",
                      fmt::format("a target with lags below --train-context {}", train_context));
    if (!r.y.allFinite()) throw_bad_value(where, "target", "'" + name + "'", "finite values");
    resolved.push_back(std::move(r));
  }
  TuneOptions o;
  o.ridge = ridge;
  o.starts = starts;
  o.seed = seed;
  o.max_iterations = max_iterations;

  struct Row {
    std::string target, which, encoding, split;
    std::int64_t context, lags;
    double mse, r2, cond;
  };
  std::vector<Row> rows;
  py::dict summary;
  for (const auto& r : resolved) {
    Eigen::Index n_train = 0;
    while (n_train < r.lags.size() && r.lags[n_train] < train_context) ++n_train;
    const TuneResult result = interruptible([&] { return tune_encoding(tunable, r.lags.head(n_train), r.y.head(n_train), o); });
    for (const auto* enc : {&e, &result.tuned}) {
      const std::string which = enc == &e ? "untuned" : "tuned", spelled = spelling(*enc);
      const auto scores = interruptible([&] { return score_encoding(*enc, r.lags, r.y, train_context, eval_contexts, ridge); });
      for (const auto& s : scores) rows.push_back({r.name, which, spelled, s.split, s.context, s.lags, s.mse, s.r2, s.cond});
    }
    py::list st;
    for (const auto& s : result.starts) {
      py::dict x;
      x["kind"] = s.kind, x["initial_cost"] = s.initial_cost, x["final_cost"] = s.final_cost;
      x["iterations"] = s.iterations, x["termination"] = s.termination;
      st.append(x);
    }
    py::dict t;
    t["tuned_encoding"] = spelling(result.tuned);
    t["params"] = py::cast(result.params);
    t["untuned_cost"] = result.untuned_cost;
    t["tuned_cost"] = result.tuned_cost;
    t["best_start"] = result.best_start;
    t["starts"] = st;
    t["seconds"] = result.seconds;
    summary[py::str(r.name)] = t;
  }
  py::dict d;
  std::vector<std::string> target, which, enc, split;
  std::vector<std::int64_t> context, lags;
  std::vector<double> mse, r2, cond;
  for (const auto& r : rows) {
    target.push_back(r.target), which.push_back(r.which), enc.push_back(r.encoding), split.push_back(r.split);
    context.push_back(r.context), lags.push_back(r.lags);
    mse.push_back(r.mse), r2.push_back(r.r2), cond.push_back(r.cond);
  }
  d["target"] = target;
  d["which"] = which;
  d["encoding"] = enc;
  d["context"] = int_column(context);
  d["split"] = split;
  d["lags"] = int_column(lags);
  d["mse"] = column(std::move(mse));
  d["r2"] = column(std::move(r2));
  d["cond"] = column(std::move(cond));
  return py::make_tuple(d, summary);
}

py::tuple py_fit_spectrum(const std::string& spectrum, const py::object& lags_in, const py::object& values_in,
                          int max_iterations) {
  const std::string command = "ropekit fit-params";
  KernelTable table;
  if (py::isinstance<py::str>(lags_in) && values_in.is_none()) {
    table = read_kernel_table(lags_in.cast<std::string>(), command + ": --kernel-data");
  } else {
    table.lag = to_lags(lags_in, 1, command, "--kernel-data").col(0);
    table.value = to_lags(values_in, 1, command, "--kernel-data").col(0);
    if (table.lag.size() != table.value.size())
      bad(command, "--kernel-data", fmt::format("{} lags and {} values", table.lag.size(), table.value.size()),
          "one value per lag");
  }
  const SpectralFitResult r = interruptible([&] { return fit_spectrum(spectrum, table, command, max_iterations); });
  std::vector<std::string> name;
  std::vector<double> start, estimate, se;
  for (const auto& p : r.params) name.push_back(p.name), start.push_back(p.start), estimate.push_back(p.estimate), se.push_back(p.std_error);
  py::dict d;
  d["parameter"] = name;
  d["start"] = column(std::move(start));
  d["estimate"] = column(std::move(estimate));
  d["std_error"] = column(std::move(se));
  py::dict s;
  s["spectrum"] = spelling(r.fitted);
  s["rows"] = r.rows, s["rss"] = r.rss, s["rms"] = r.rms;
  s["initial_cost"] = r.initial_cost, s["final_cost"] = r.final_cost, s["iterations"] = r.iterations;
  s["termination"] = r.termination, s["seconds"] = r.seconds, s["derivatives"] = r.derivatives;
  return py::make_tuple(d, s);
}

// ---------------------------------------------------------------------------------------------
// RF-RoPE: spectrum_kernel, verify_master

void check_rf_lags(const Where& where, const Lags& lags) {
  check_rf_lag_range(where, std::span<const double>(lags.data(), static_cast<std::size_t>(lags.size())));
}

py::dict py_spectrum_kernel(const std::string& text, const py::object& lags_in) {
  const std::string command = "ropekit kernel";
  const Where where = Where::options(command);
  const Spectrum s = parse_spectrum(text);
  const Lags lags = lags_in.is_none() ? parse_lags(default_lag_text(dims(s), 5), dims(s), where, "--lags")
                                      : to_lags(lags_in, dims(s), command);
  check_rf_lags(where, lags);
  const Eigen::Index n = lags.rows();
  Eigen::VectorXd phi(n), phi2(n), vc(n), vs(n);
  interruptible([&] {
    std::vector<double> lag(static_cast<std::size_t>(lags.cols()));
    for (Eigen::Index i = 0; i < n; ++i) {
      if (i % 4096 == 0) check_cancelled();
      for (Eigen::Index j = 0; j < lags.cols(); ++j) lag[static_cast<std::size_t>(j)] = lags(i, j);
      const KernelValues kv = kernel_values(s, lag);
      phi[i] = kv.phi, phi2[i] = kv.phi2, vc[i] = kv.var_cos, vs[i] = kv.var_sin;
    }
    return 0;
  });
  py::dict d;
  d["spectrum"] = spelling(s);
  d["lag"] = lag_column(lags);
  d["phi"] = column(std::move(phi));
  d["phi2"] = column(std::move(phi2));
  d["var_cos"] = column(std::move(vc));
  d["var_sin"] = column(std::move(vs));
  return d;
}

py::tuple py_verify_master(const std::string& spectrum, int blocks, std::int64_t trials, const py::object& lags_in,
                           std::uint64_t seed, const std::string& sampling, const py::object& content_in,
                           double alpha, const py::object& draw_from, bool power, const py::object& q_in,
                           const py::object& k_in, int threads) {
  const std::string command = "ropekit verify master";
  const Where where = Where::options(command);
  VerifyOptions o;
  o.spectrum = parse_spectrum(spectrum);
  const int k = dims(o.spectrum);
  if (!draw_from.is_none() && power) throw InputError(command + ": give --draw-from or --power, not both");
  if (!draw_from.is_none()) {
    const std::string text = draw_from.cast<std::string>();
    o.draw = parse_spectrum(text);
    if (dims(*o.draw) != k)
      throw_bad_value(command, "--draw-from", fmt::format("'{}' (dims {})", text, dims(*o.draw)),
                      fmt::format("of --spectrum's dims, {}", k));
  }
  o.lags = lags_in.is_none() ? parse_lags(default_lag_text(k, 4), k, where, "--lags") : to_lags(lags_in, k, command);
  check_rf_lags(where, o.lags);
  if (power) {
    o.draw = wrong_density(o.spectrum);
    if (!differs(o.spectrum, *o.draw, o.lags))
      throw InputError(fmt::format("{}: --power: the wrong density ({}) has the same kernel as {} at these lags "
                                   "(a scale of 1 is its own reciprocal): use a scale other than 1",
                                   command, wrong_density_note(o.spectrum), spelling(o.spectrum)));
  }
  check_in_range(where, "blocks", blocks, 1, 1 << 20);
  o.mc.trials = trials;
  o.mc.seed = seed;
  o.mc.threads = threads;
  try {
    o.mc.sampling = parse_sampling(sampling);
  } catch (const InputError&) {
    throw_bad_value(command, "--sampling", "'" + sampling + "'", "iid, antithetic or stratified");
  }
  o.mc.validate(where);
  if (!(alpha > 0 && alpha < 1)) throw_bad_value(where, "alpha", format_number(alpha), "in (0, 1)");
  if (!(alpha >= min_alpha(static_cast<std::size_t>(o.lags.rows()))))
    throw_bad_value(where, "alpha", format_number(alpha),
                    fmt::format("in [{}, 1) for {} lags: alpha / (2 L) must be a normal float64 number, or the "
                                "normal quantile is not computed",
                                format_number(min_alpha(static_cast<std::size_t>(o.lags.rows()))), o.lags.rows()));
  check_samplable(o.draw ? *o.draw : o.spectrum, command + ": spectrum");
  if (o.mc.sampling == Sampling::stratified && k != 1)
    throw_bad_value(command, "--sampling", "stratified", "iid or antithetic for k > 1 (stratified needs k = 1)");
  if (!q_in.is_none() || !k_in.is_none()) {
    if (q_in.is_none() || k_in.is_none()) throw InputError(command + ": give both --q and --k, or neither");
    if (!content_in.is_none()) throw InputError(command + ": give --content or --q/--k, not both");
    const Eigen::VectorXd qv = to_lags(q_in, 1, command, "--q").col(0), kv = to_lags(k_in, 1, command, "--k").col(0);
    o.content = content_from_vectors(std::vector<double>(qv.data(), qv.data() + qv.size()),
                                     std::vector<double>(kv.data(), kv.data() + kv.size()));
  } else {
    const std::string kind = content_in.is_none() ? "random" : content_in.cast<std::string>();
    ContentKind ck;
    try {
      ck = parse_content_kind(kind);
    } catch (const InputError&) {
      throw_bad_value(command, "--content", "'" + kind + "'", "random, correlated or aligned");
    }
    o.content = make_content(ck, blocks, seed);
  }
  o.alpha = alpha;
  const VerifyReport r = interruptible([&] { return verify(o); });
  std::vector<double> expected, mean, se, z, ve, vo;
  std::vector<bool> pass;
  Lags lags(static_cast<Eigen::Index>(r.lags.size()), k);
  for (std::size_t i = 0; i < r.lags.size(); ++i) {
    const auto& l = r.lags[i];
    for (int j = 0; j < k; ++j) lags(static_cast<Eigen::Index>(i), j) = l.lag[static_cast<std::size_t>(j)];
    expected.push_back(l.expected), mean.push_back(l.mean), se.push_back(l.stderr_mean), z.push_back(l.z);
    ve.push_back(l.var_expected), vo.push_back(l.var_observed), pass.push_back(l.mean_pass);
  }
  py::dict d;
  d["lag"] = lag_column(lags);
  d["expected"] = column(std::move(expected));
  d["mean"] = column(std::move(mean));
  d["stderr"] = column(std::move(se));
  d["z"] = column(std::move(z));
  d["var_expected"] = column(std::move(ve));
  d["var_observed"] = column(std::move(vo));
  d["pass"] = bool_column(pass);
  py::dict s;
  s["pass"] = r.mean_pass;
  s["max_abs_z"] = r.max_abs_z;
  s["z_critical"] = r.z_critical;
  s["alpha"] = r.alpha;
  s["alpha_per_lag"] = r.alpha_per_lag;
  s["blocks"] = r.blocks;
  s["trials"] = r.trials;
  s["spectrum"] = r.spectrum;
  s["draw"] = r.draw;
  s["seed"] = seed;
  return py::make_tuple(d, s);
}

// ---------------------------------------------------------------------------------------------
// design (spectral/inverse_design.hpp, as `ropekit design`)

py::tuple py_design(const std::string& k, int blocks, const std::string& sampling, const py::object& seed_in,
                    const py::object& lags_in, const std::string& taper, std::int64_t wpoints,
                    const std::optional<double>& wmax, const std::optional<double>& tolerance,
                    const std::string& spectrum_route) {
  const std::string command = "ropekit design";
  DesignRequest r;
  r.kernel = k;
  r.blocks = blocks;
  r.sampling = sampling;
  r.seed_given = !seed_in.is_none();
  if (r.seed_given) r.seed = seed_in.cast<std::uint64_t>();
  // Python objects are read here, with the GIL: the work below runs without it.
  if (py::isinstance<py::str>(lags_in)) r.lags_text = lags_in.cast<std::string>();
  else if (!lags_in.is_none()) r.lags = to_lags(lags_in, 1, command);
  r.taper = taper;
  r.wpoints = wpoints;
  r.wmax = wmax;
  r.tolerance = tolerance;
  r.spectrum_route = spectrum_route;
  const DesignResult d = interruptible([&] { return inverse_design(r); });
  const Eigen::VectorXd err = d.realised - d.target;
  py::dict rows;
  rows["lag"] = column(d.lags);
  rows["target"] = column(d.target);
  rows["realised"] = column(d.realised);
  rows["error"] = column(err);
  rows["prop4_variance"] = column(d.variance);
  rows["prop4_variance_iid"] = column(d.variance_iid);
  py::dict s;
  s["route"] = d.route;
  s["tuned_encoding"] = d.tuned;
  s["frequencies"] = column(d.freqs);
  s["positive_definite"] = d.est.positive_definite;
  s["negative_mass"] = d.est.negative_mass;
  s["max_abs_error"] = d.max_abs;
  s["rms_error"] = d.rms;
  return py::make_tuple(rows, s);
}

// ---------------------------------------------------------------------------------------------
// lie_check

py::dict py_lie_check(const py::object& generators, const py::object& mixing, int window, int pairs,
                      std::int64_t max_exp, std::uint64_t seed, const std::string& route_text) {
  const std::string command = "ropekit lie check";
  Where where = Where::options(command);
  GeneratorSet set;
  std::string source = "generators";
  if (py::isinstance<py::str>(generators)) {
    source = generators.cast<std::string>();
    set = load_generator_file(source);
    if (!mixing.is_none()) throw_bad_value(where, "mixing", "(given)", "absent with a generator file (its \"Q\" is the mixing)");
  } else {
    auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(generators);
    if (!a || a.ndim() != 3 || a.shape(1) != a.shape(2) || a.shape(0) < 1 || a.shape(1) < 1)
      throw_bad_value(where, "generators", "(given)", "a file path or an array of shape (N, n, n), N >= 1");
    set.dim = static_cast<int>(a.shape(1));
    for (py::ssize_t i = 0; i < a.shape(0); ++i) {
      Eigen::MatrixXd T(set.dim, set.dim);
      for (int r = 0; r < set.dim; ++r)
        for (int c = 0; c < set.dim; ++c) T(r, c) = a.at(i, r, c);
      set.base.push_back(std::move(T));
    }
    if (!mixing.is_none()) set.mixing = mixing.cast<Eigen::MatrixXd>();
  }
  where.rename("generators", "generators of '" + source + "'");
  LieCheckOptions o;
  o.window = window;
  o.pairs = pairs;
  o.max_exp = max_exp;
  o.seed = seed;
  if (route_text == "auto") o.route = Route::automatic;
  else if (route_text == "closed-form") o.route = Route::closed_form;
  else if (route_text == "matrix-exp") o.route = Route::matrix_exp;
  else throw_bad_value(command, "--route", "'" + route_text + "'", "auto, closed-form or matrix-exp");
  o.validate(where);
  const LieCheck c = interruptible([&] {
    check_lie_inputs(set, o, where);
    return check(set, o, where);
  });
  py::dict d;
  d["dim"] = c.dim, d["axes"] = c.axes, d["window"] = c.window, d["masa_bound"] = c.masa_bound, d["route"] = c.route;
  d["skew"] = c.skew, d["skew_defect"] = c.skew_defect, d["skew_tolerance"] = c.skew_tolerance;
  d["commuting"] = c.commuting, d["max_commutator"] = c.max_commutator, d["commutator_tolerance"] = c.commutator_tolerance;
  d["independent"] = c.independent, d["rank"] = c.rank, d["rank_tolerance"] = c.rank_tolerance;
  d["singular_values"] = column(std::vector<double>(c.singular_values));
  d["within_masa_bound"] = c.within_masa_bound;
  d["has_mixing"] = c.has_mixing, d["orthogonal"] = c.orthogonal;
  d["orthogonality_defect"] = c.orthogonality_defect, d["orthogonality_tolerance"] = c.orthogonality_tolerance;
  d["det_q"] = c.det_q;
  d["relativity"] = c.relativity, d["relativity_defect"] = c.relativity_defect;
  d["relativity_tolerance"] = c.relativity_tolerance, d["window_scale"] = c.window_scale;
  d["pairs_checked"] = c.pairs_checked;
  d["reversibility"] = c.reversibility, d["min_position_distance"] = c.min_position_distance;
  d["closest_x"] = c.closest_x, d["closest_y"] = c.closest_y;
  d["distances_checked"] = c.distances_checked, d["distances_exhaustive"] = c.distances_exhaustive;
  d["distance_method"] = c.distance_method;
  d["brief_report"] = c.brief_report();
  return d;
}

// ---------------------------------------------------------------------------------------------
// lists

py::dict py_list_encodings() {
  std::vector<std::string> s, a, o, f;
  for (const auto& x : encoding_families()) s.push_back(x.spelling), a.push_back(x.aliases), o.push_back(x.operator_), f.push_back(x.features);
  py::dict d;
  d["spelling"] = s, d["aliases"] = a, d["operator"] = o, d["features"] = f;
  return d;
}
py::dict py_list_targets() {
  std::vector<std::string> n, y;
  for (const auto& [name, formula] : target_families()) n.push_back(name), y.push_back(formula);
  py::dict d;
  d["spellings"] = n, d["y(d)"] = y;
  return d;
}
py::dict py_list_spectra() {
  std::vector<std::string> s, w, k;
  for (const auto& f : spectrum_families()) s.push_back(f.spelling), w.push_back(f.frequencies), k.push_back(f.kernel);
  py::dict d;
  d["spelling"] = s, d["frequencies"] = w, d["Phi(Dp)"] = k;
  return d;
}

}  // namespace

#include "docstrings.inc"

PYBIND11_MODULE(_ropekit, m) {
  m.doc() = "ropekit's library bound with pybind11 (see the package `ropekit`)";
  m.attr("__version__") = std::string(kVersion);
  m.attr("DEFAULT_SEED") = kDefaultSeed;
  // InputError -> ValueError carrying the command line's message (pythonised); cancellation never escapes.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, pythonise(e.what()).c_str());
    } catch (const Cancelled& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });
  using namespace py::literals;
  m.def("kernel", &py_kernel, doc_kernel, "encoding"_a, "lags"_a = py::none(), "rho"_a = 1.0, "seq_len"_a = py::none());
  m.def("frequencies", &py_frequencies, doc_frequencies, "encoding"_a, "seq_len"_a = py::none(), "float32"_a = false,
        "convention"_a = "huggingface");
  m.def("features", &py_features, doc_features, "encoding"_a, "lags"_a = py::none());
  m.def("fit", &py_fit, doc_fit, "encodings"_a, "targets"_a = py::none(), "train_context"_a, "eval_contexts"_a,
        "ridge"_a = 1e-4, py::kw_only(), "methods"_a = py::none(), "seeds"_a = std::vector<std::int64_t>{0},
        "num_freqs"_a = 16, "head_dim"_a = 64, "theta"_a = 1e4, "gamma"_a = 1e-4, "tau"_a = "bounded",
        "target_freq_index"_a = 3, "second_freq_index"_a = 5, "threads"_a = 0);
  m.def("fit_params", &py_fit_params, doc_fit_params, "encoding"_a, "free"_a, "targets"_a = py::none(),
        "train_context"_a = 1024, "eval_contexts"_a = std::vector<int>{1024, 2048, 4096, 8192}, "ridge"_a = 1e-4,
        py::kw_only(), "starts"_a = 3, "seed"_a = std::uint64_t{1}, "max_iterations"_a = 200, "head_dim"_a = 64,
        "num_freqs"_a = 16, "theta"_a = 1e4, "gamma"_a = 1e-4, "target_freq_index"_a = 3, "second_freq_index"_a = 5);
  m.def("fit_spectrum", &py_fit_spectrum, doc_fit_spectrum, "spectrum"_a, "lags"_a, "values"_a = py::none(),
        "max_iterations"_a = 200);
  m.def("spectrum_kernel", &py_spectrum_kernel, doc_spectrum_kernel, "spectrum"_a, "lags"_a = py::none());
  m.def("verify_master", &py_verify_master, doc_verify_master, "spectrum"_a, "blocks"_a = 64, "trials"_a = 20000,
        "lags"_a = py::none(), py::kw_only(), "seed"_a = kDefaultSeed, "sampling"_a = "iid", "content"_a = py::none(),
        "alpha"_a = 1e-6, "draw_from"_a = py::none(), "power"_a = false, "q"_a = py::none(), "k"_a = py::none(),
        "threads"_a = 0);
  m.def("design", &py_design, doc_design, "kernel"_a, "blocks"_a, "sampling"_a = "quantile", "seed"_a = py::none(),
        "lags"_a = py::none(), py::kw_only(), "taper"_a = "none", "wpoints"_a = 0, "wmax"_a = py::none(),
        "tolerance"_a = py::none(), "spectrum_route"_a = "");
  m.def("lie_check", &py_lie_check, doc_lie_check, "generators"_a, "mixing"_a = py::none(), py::kw_only(),
        "window"_a = 32, "pairs"_a = 256, "max_exp"_a = 2048, "seed"_a = std::uint64_t{0x5EED}, "route"_a = "auto");
  m.def("list_encodings", &py_list_encodings, doc_list_encodings);
  m.def("list_targets", &py_list_targets, doc_list_targets);
  m.def("list_spectra", &py_list_spectra, doc_list_spectra);
  m.def("_pythonise", &pythonise, "The command line's message as the module words it (for tests).");
}
