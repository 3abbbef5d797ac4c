#pragma once
// Shared by the Python module's binding files (python/src/*_bindings.cpp, module.cpp): the message rewriting, the
// interruptible worker call, the conversions of arguments and of result columns, and the bound functions.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/models/model_layers.hpp"

namespace py = pybind11;

namespace ropekit {
struct Encoding;
}  // namespace ropekit

namespace ropekit::bindings {

/// "ropekit verify master: --draw-from = ..." -> "ropekit.verify_master: draw_from = ...".
std::string pythonise(std::string msg);

[[noreturn]] void bad(const std::string& where, const std::string& name, const std::string& value,
                      const std::string& constraint);

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

// Lags as the command line spells them ("0,1,10", "0:8", "1,0;0,2") or as numbers: a scalar, a 1-D array (k = 1) or
// an (n, k) array.
Lags to_lags(const py::object& o, int k, const std::string& command, const std::string& name = "--lags");
/// 1-D lags given as an array (not a spelling) of at most one dimension, as a contiguous float64 array (the same
/// object when it is one already); nullopt for None, a spelling or any other shape (to_lags reads or refuses it).
std::optional<py::array_t<double>> lag_array(const py::object& o, const std::string& command,
                                             const std::string& name = "--lags");
/// ValueError "<command>: <name> = an array of dtype complex128 (must be real numbers ...)" for a complex array or
/// scalar (numpy would drop the imaginary parts).
void check_real(const py::object& o, const std::string& command, const std::string& name);
/// A str or a sequence of str; anything else is ValueError "<command>: <name> = <repr> (must be a str or a list of str)".
std::vector<std::string> to_strings(const py::object& o, const std::string& command, const std::string& name);
/// repr(o), cut to 60 characters (a refusal never echoes an unbounded value).
std::string short_repr(const py::object& o);
/// o as T, or ValueError "<command>: <name> = <repr> (must be <constraint>)" instead of pybind11's RuntimeError
/// "Unable to cast Python instance" (issue 20 item 10).
template <class T>
T cast_arg(const py::object& o, const std::string& command, const std::string& name, const std::string& constraint) {
  try {
    return o.cast<T>();
  } catch (const py::cast_error&) {
    bad(command, name, short_repr(o), constraint);
  }
}
// A 1-D column of float64 handed to numpy without a copy (the vector moves into a capsule).
py::array column(Eigen::VectorXd v);
py::array column(std::vector<double> v);
py::array int_column(const std::vector<std::int64_t>& v);
py::array bool_column(const std::vector<bool>& v);
// A lag column: a float64 vector for 1-D lags, an (n, k) array for k-D ones.
py::array lag_column(const Lags& lags);

/// model= and layer_type= bound (model_bindings.cpp): the model file's layer types (several: every one without
/// layer_type; else the one named, or the file's one encoding). ValueError naming both arguments when the encoding is
/// given too, layer_type without model, or a model that is not a path.
std::vector<ModelLayer> bound_model_layers(const std::string& command, const std::string& encoding_option,
                                           const py::object& encoding, const py::object& model,
                                           const py::object& layer_type, bool several);
/// The same for a function of one encoding: the layer type, or nullopt without model and layer_type.
std::optional<ModelLayer> bound_model_layer(const std::string& command, const std::string& encoding_option,
                                            const py::object& encoding, const py::object& model,
                                            const py::object& layer_type);
/// `d` with a first column "layer_type": `label` on each of its rows (the length of its first column).
py::dict with_layer_type(const py::dict& d, const std::string& label);

/// The encoding's notes (encoding_notes) as UserWarnings "ropekit.<function>: note: <text>" (encoding_bindings.cpp).
void warn_notes(const std::string& function, const Encoding& e);

// The bound functions, one file per concept; module.cpp names their arguments and docstrings.
// check_bindings.cpp
py::dict py_check(const py::object& encoding, const py::object& window, std::optional<double> seq_len,
                  const py::object& model, const py::object& layer_type);
// encoding_bindings.cpp
py::dict py_kernel(const py::object& encoding, const py::object& lags_in, double rho, std::optional<double> seq_len,
                   const std::optional<std::vector<std::string>>& columns, const py::object& model,
                   const py::object& layer_type, std::optional<double> position);
py::dict py_frequencies(const std::string& text, std::optional<double> seq_len, bool float32,
                        const std::string& convention_text);
py::tuple py_features(const py::object& encoding, const py::object& lags_in, const py::object& model,
                      const py::object& layer_type);
py::dict py_list_encodings(bool verbose);
py::dict py_list_schemes();
py::dict py_list_pipelines();
// fit_bindings.cpp
py::dict py_fit(const py::object& encodings, const py::object& targets, int train_context,
                const std::vector<int>& eval_contexts, double ridge, const py::object& methods,
                const std::vector<std::int64_t>& seeds, int num_freqs, int head_dim, double theta, double gamma,
                const std::string& tau, int target_freq_index, int second_freq_index, int threads, bool summary,
                const py::object& model, const py::object& layer_type);
py::tuple py_fit_params(const std::string& encoding_text, const py::object& free_in, const py::object& targets_in,
                        int train_context, const std::vector<int>& eval_contexts, double ridge, int starts,
                        std::uint64_t seed, int max_iterations, int head_dim, int num_freqs, double theta, double gamma,
                        int freq_index, int second_freq_index);
py::tuple py_fit_spectrum(const std::string& spectrum, const py::object& lags_in, const py::object& values_in,
                          int max_iterations);
py::dict py_list_targets();
// report_bindings.cpp
py::tuple py_report(const py::object& files, const std::string& format, const std::optional<std::string>& svg_stem,
                    const std::optional<std::vector<double>>& tolerances);
// rf_bindings.cpp
py::dict py_spectrum_kernel(const std::string& text, const py::object& lags_in);
py::tuple py_verify_master(const std::string& spectrum, int blocks, std::int64_t trials, const py::object& lags_in,
                           std::uint64_t seed, const std::string& sampling, const py::object& content_in,
                           double alpha, const py::object& draw_from, bool power, const py::object& q_in,
                           const py::object& k_in, int threads);
py::tuple py_design(const std::string& k, int blocks, const std::string& sampling, const py::object& seed_in,
                    const py::object& lags_in, const std::string& taper, std::int64_t wpoints,
                    const std::optional<double>& wmax, const std::optional<double>& tolerance,
                    const std::string& spectrum_route);
py::dict py_list_spectra();
// envelope_bindings.cpp
py::dict py_envelope(const py::object& x, const py::object& y, int columns, std::optional<double> lo,
                     std::optional<double> hi, bool log, bool median);
// lie_bindings.cpp
py::dict py_model(const std::string& path);
py::dict py_frameworks(const py::object& path, const py::object& layer_type);
py::dict py_precision(const py::object& encoding, const py::object& positions, const std::string& dtype,
                      const std::optional<std::string>& pipeline, bool table, const std::string& inv_freq_dtype,
                      const std::string& angle_dtype, std::optional<double> seq_len, const py::object& lags,
                      std::int64_t trials, std::uint64_t seed, std::optional<double> tolerance,
                      const py::object& model, const py::object& layer_type);
py::dict py_lie_check(const py::object& generators, const py::object& mixing, int window, int pairs,
                      std::int64_t max_exp, std::uint64_t seed, const std::string& route_text);

}  // namespace ropekit::bindings
