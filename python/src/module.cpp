// The Python module `ropekit` (issue 10): pybind11 over the library (lib/ropekit, targets/), nothing of the command
// line. Spellings are the command line's strings; every table comes back as a dict of columns named as the command
// line's CSV columns (numbers as float64 / int64 numpy arrays, text as lists of str), so pandas.DataFrame(d) is the
// CSV. Bad input raises ValueError with the command line's one-line message, its command written as the Python
// function ("ropekit kernel:" -> "ropekit.kernel:") and its options as the keyword arguments ("--seq-len" ->
// "seq_len"). Calls that can run long compute on a worker thread with the GIL released while the calling thread
// polls for Ctrl-C, which cancels the work between chunks (ropekit/core/cancel.hpp) and raises KeyboardInterrupt.
#include "bindings.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/version.hpp"

using namespace ropekit;
using namespace ropekit::bindings;

namespace {

#include "docstrings.inc"

// `msg` (pythonised) headed "ropekit.<function>: ", whichever command's words the library's message began with
// (spectrum_kernel reports through `kernel`'s code, fit_spectrum through `fit-params`') or none.
std::string headed(const std::string& function, std::string msg) {
  const std::string head = "ropekit." + function + ": ";
  if (msg.rfind(head, 0) == 0) return msg;
  const std::size_t colon = msg.find(": ");
  if (msg.rfind("ropekit", 0) == 0 && colon != std::string::npos &&
      msg.find_first_not_of("abcdefghijklmnopqrstuvwxyz_-. ", 7) == colon)
    msg.erase(0, colon + 2);  // another command's head
  return head + msg;
}

// f bound as ropekit.<function>: its InputError is ValueError headed with the function's name.
template <class R, class... A>
auto named(const char* function, R (*f)(A...)) {
  return [function, f](A... a) -> R {
    try {
      return f(std::forward<A>(a)...);
    } catch (const InputError& e) {
      throw py::value_error(headed(function, pythonise(e.what())));
    }
  };
}

}  // namespace

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
  m.def("kernel", named("kernel", &py_kernel), doc_kernel, "encoding"_a = py::none(), "lags"_a = py::none(),
        "rho"_a = 1.0, "seq_len"_a = py::none(), "columns"_a = py::none(), py::kw_only(), "model"_a = py::none(),
        "layer_type"_a = py::none(), "position"_a = py::none());
  m.def("check", named("check", &py_check), doc_check, "encoding"_a = py::none(), "window"_a = py::none(),
        "seq_len"_a = py::none(), py::kw_only(), "model"_a = py::none(), "layer_type"_a = py::none());
  m.def("model", named("model", &py_model), doc_model, "path"_a);
  m.def("frameworks", named("frameworks", &py_frameworks), doc_frameworks, "path"_a, "layer_type"_a = py::none());
  m.def("report", named("report", &py_report), doc_report, "files"_a, "format"_a = "md", "svg_stem"_a = "report",
        "tolerances"_a = py::none());
  m.def("precision", named("precision", &py_precision), doc_precision, "encoding"_a = py::none(),
        "positions"_a = py::none(), "dtype"_a = "fp32", "pipeline"_a = py::none(), "table"_a = false,
        "inv_freq_dtype"_a = "fp32", "angle_dtype"_a = "fp32", "seq_len"_a = py::none(), "lags"_a = py::none(),
        "trials"_a = 64, "seed"_a = 0, "tolerance"_a = py::none(), py::kw_only(), "model"_a = py::none(),
        "layer_type"_a = py::none());
  m.def("frequencies", named("frequencies", &py_frequencies), doc_frequencies, "encoding"_a, "seq_len"_a = py::none(),
        "float32"_a = false, "convention"_a = "huggingface");
  m.def("features", named("features", &py_features), doc_features, "encoding"_a = py::none(), "lags"_a = py::none(),
        py::kw_only(), "model"_a = py::none(), "layer_type"_a = py::none());
  m.def("fit", named("fit", &py_fit), doc_fit, "encodings"_a = py::none(), "targets"_a = py::none(), "train_context"_a,
        "eval_contexts"_a, "ridge"_a = 1e-4, py::kw_only(), "methods"_a = py::none(),
        "seeds"_a = std::vector<std::int64_t>{0}, "num_freqs"_a = 16, "head_dim"_a = 64, "theta"_a = 1e4,
        "gamma"_a = 1e-4, "tau"_a = "bounded", "target_freq_index"_a = 3, "second_freq_index"_a = 5, "threads"_a = 0,
        "summary"_a = false, "model"_a = py::none(), "layer_type"_a = py::none());
  m.def("fit_params", named("fit_params", &py_fit_params), doc_fit_params, "encoding"_a, "free"_a,
        "targets"_a = py::none(), "train_context"_a = 1024,
        "eval_contexts"_a = std::vector<int>{1024, 2048, 4096, 8192}, "ridge"_a = 1e-4, py::kw_only(), "starts"_a = 3,
        "seed"_a = std::uint64_t{1}, "max_iterations"_a = 200, "head_dim"_a = 64, "num_freqs"_a = 16, "theta"_a = 1e4,
        "gamma"_a = 1e-4, "target_freq_index"_a = 3, "second_freq_index"_a = 5);
  m.def("fit_spectrum", named("fit_spectrum", &py_fit_spectrum), doc_fit_spectrum, "spectrum"_a, "lags"_a,
        "values"_a = py::none(), "max_iterations"_a = 200);
  m.def("spectrum_kernel", named("spectrum_kernel", &py_spectrum_kernel), doc_spectrum_kernel, "spectrum"_a,
        "lags"_a = py::none());
  m.def("verify_master", named("verify_master", &py_verify_master), doc_verify_master, "spectrum"_a, "blocks"_a = 64,
        "trials"_a = 20000, "lags"_a = py::none(), py::kw_only(), "seed"_a = kDefaultSeed, "sampling"_a = "iid",
        "content"_a = py::none(), "alpha"_a = 1e-6, "draw_from"_a = py::none(), "power"_a = false, "q"_a = py::none(),
        "k"_a = py::none(), "threads"_a = 0);
  m.def("design", named("design", &py_design), doc_design, "kernel"_a, "blocks"_a, "sampling"_a = "quantile",
        "seed"_a = py::none(), "lags"_a = py::none(), py::kw_only(), "taper"_a = "none", "wpoints"_a = 0,
        "wmax"_a = py::none(), "tolerance"_a = py::none(), "spectrum_route"_a = "");
  m.def("lie_check", named("lie_check", &py_lie_check), doc_lie_check, "generators"_a, "mixing"_a = py::none(),
        py::kw_only(), "window"_a = 32, "pairs"_a = 256, "max_exp"_a = 2048, "seed"_a = std::uint64_t{0x5EED},
        "route"_a = "auto");
  m.def("envelope", named("envelope", &py_envelope), doc_envelope, "x"_a, "y"_a, "columns"_a = 800, "lo"_a = py::none(),
        "hi"_a = py::none(), "log"_a = false, "median"_a = false);
  m.def("list_encodings", named("list_encodings", &py_list_encodings), doc_list_encodings, "verbose"_a = false);
  m.def("list_schemes", named("list_schemes", &py_list_schemes), doc_list_schemes);
  m.def("list_pipelines", named("list_pipelines", &py_list_pipelines), doc_list_pipelines);
  m.def("list_targets", named("list_targets", &py_list_targets), doc_list_targets);
  m.def("list_spectra", named("list_spectra", &py_list_spectra), doc_list_spectra);
  m.def("_pythonise", &pythonise, "The command line's message as the module words it (for tests).");
}
