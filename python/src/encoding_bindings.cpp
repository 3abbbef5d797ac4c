// ropekit.kernel, frequencies, features and list_encodings: an encoding's kernel, rotary frequencies and feature
// basis (as `ropekit kernel --encoding`, `ropekit frequencies`, `ropekit features`).
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
#include "ropekit/encodings/rotary_spectrum.hpp"
#include "ropekit/commands/features_request.hpp"
#include "ropekit/commands/frequencies_request.hpp"
#include "ropekit/commands/kernel_request.hpp"
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

// The arguments bound to the library's requests (encodings/*_request.hpp), as the command line binds its options;
// Python objects are read with the GIL, the work runs without it.

// The encoding's notes (encoding_notes: values accepted as transformers does though it warns or falls back) as
// UserWarnings "ropekit.<function>: note: <text>", as the command line prints them on stderr.
void warn_notes(const std::string& function, const Encoding& e) {
  for (const std::string& note : encoding_notes(e)) {
    const std::string text = fmt::format("ropekit.{}: note: {}", function, note);
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) throw py::error_already_set();  // warnings as errors
  }
}

namespace {

bool wants(const std::vector<std::string>& columns, const char* name) {
  return std::find(columns.begin(), columns.end(), name) != columns.end();
}

}  // namespace

namespace {

py::dict kernel_one(const std::string& text, const py::object& lags_in, double rho, std::optional<double> seq_len,
                    const std::optional<std::vector<std::string>>& columns);

}  // namespace

namespace {

// A model's layer types' rows (model=): each layer type's kernel with the lags its window hides NaN (the command
// line's empty cells) and the query temperature's s(p) on kernel and content variance, as kernel_masked and
// kernel_query_scale (commands/kernel_request.hpp) say; the windows' and temperatures' notes as UserWarnings.
void apply_layers(const std::vector<ModelLayer>& layers, std::optional<double> position, std::vector<py::dict>& parts) {
  KernelRequest request;
  for (const auto& l : layers) request.encodings.push_back(l.encoding);
  request.layers = layers;
  request.position = position;
  request.lags_given = true;
  const KernelPlan plan = interruptible([&] { return plan_kernel(request); });  // windows need 1-D lags
  std::optional<std::pair<double, double>> range;
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const auto lag = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(parts[j]["lag"]);
    const py::ssize_t n = lag.shape(0), k = lag.ndim() == 2 ? lag.shape(1) : 1;
    const double* l = lag.data();
    for (py::ssize_t i = 0; i < n; ++i) {
      const double x = l[i * k];
      range = range ? std::pair(std::min(range->first, x), std::max(range->second, x)) : std::pair(x, x);
    }
    for (const auto& item : parts[j]) {
      const std::string c = py::str(item.first);
      if (c == "encoding" || c == "lag") continue;
      const auto in = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(item.second);
      py::array_t<double> out(n);
      double* o = out.mutable_data();
      for (py::ssize_t i = 0; i < n; ++i) {
        const double x = l[i * k], s = kernel_query_scale(request, j, x);
        o[i] = kernel_masked(request, j, x) ? std::numeric_limits<double>::quiet_NaN()
                                            : in.data()[i] * (c == "kernel" ? s : c == "content_variance" ? s * s : 1.0);
      }
      parts[j][item.first] = out;
    }
  }
  (void)plan;
  for (std::string note : kernel_layer_notes(request, range)) {
    if (const auto at = note.find("(empty cells, null in JSON)"); at != std::string::npos)
      note.replace(at, std::strlen("(empty cells, null in JSON)"), "(NaN)");  // the module's masked value
    const std::string text = "ropekit.kernel: note: " + note;
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) throw py::error_already_set();
  }
}

}  // namespace

py::dict py_kernel(const py::object& encoding, const py::object& lags_in, double rho, std::optional<double> seq_len,
                   const std::optional<std::vector<std::string>>& columns, const py::object& model,
                   const py::object& layer_type, std::optional<double> position) {
  std::vector<ModelLayer> layers;
  if (!model.is_none() || !layer_type.is_none()) layers = bound_model_layers("ropekit kernel", "--encoding", encoding,
                                                                            model, layer_type, true);
  if (position && layers.empty()) bad("ropekit kernel", "--position", format_number(*position), "given with model only");
  if (encoding.is_none() && layers.empty()) bad("ropekit kernel", "--encoding", "None", "given, or model");
  if (layers.empty() && py::isinstance<py::str>(encoding))
    return kernel_one(encoding.cast<std::string>(), lags_in, rho, seq_len, columns);
  // Several encodings (or a model's layer types): their rows one after another, as the command line's --encoding E1
  // E2, in one set of columns (the union, in the command line's order; NaN where a column does not apply to an
  // encoding's rows), "encoding" a list of str with one spelling per row (pandas.DataFrame(d) is the command line's
  // table); a model's rows start with "layer_type", a list of str.
  std::vector<std::string> texts;
  if (!layers.empty()) {
    for (const auto& l : layers) texts.push_back(l.encoding);
  } else {
    try {
      texts = encoding.cast<std::vector<std::string>>();
    } catch (const py::cast_error&) {
      bad("ropekit kernel", "--encoding", short_repr(encoding), "a spelling or a list of spellings");
    }
  }
  if (texts.empty()) bad("ropekit kernel", "--encoding", "[]", "at least one spelling");
  const std::vector<std::string>& order = kernel_column_names();
  std::vector<py::dict> parts;
  for (const std::string& t : texts) {
    std::optional<std::vector<std::string>> own;  // each encoding's share of the columns asked for
    if (columns) {
      KernelRequest one;
      one.encodings = {t};
      one.lags_given = true;
      const KernelPlan plan = interruptible([&] { return plan_kernel(one); });
      const auto all = kernel_plan_columns(plan);
      own.emplace();
      for (const std::string& c : *columns) {
        if (std::find(order.begin(), order.end(), c) == order.end())
          bad("ropekit kernel", "--columns", fmt::format("'{}'", c), fmt::format("columns of kernel: {}",
                                                                               fmt::join(order, ", ")));
        if (std::find(all.begin(), all.end(), c) != all.end()) own->push_back(c);
      }
      if (!wants(*own, "lag")) own->push_back("lag");  // counts the rows (left out of the result unless asked)
    }
    parts.push_back(kernel_one(t, lags_in, rho, seq_len, own));
  }
  if (!layers.empty()) apply_layers(layers, position, parts);
  std::vector<std::string> names;
  for (const std::string& c : columns ? *columns : order)
    for (const auto& p : parts)
      if (p.contains(c) && std::find(names.begin(), names.end(), c) == names.end()) {
        names.push_back(c);
        break;
      }
  std::vector<py::ssize_t> rows;  // each part's, from its lag column
  for (const auto& p : parts) rows.push_back(py::len(p["lag"]));
  py::dict d;
  if (!layers.empty()) {
    py::list label;
    for (std::size_t k = 0; k < parts.size(); ++k)
      for (py::ssize_t r = 0; r < rows[k]; ++r) label.append(layers[k].label);
    d["layer_type"] = label;
  }
  for (const std::string& c : names) {
    if (c == "encoding") {
      py::list enc;
      for (std::size_t k = 0; k < parts.size(); ++k)
        for (py::ssize_t r = 0; r < rows[k]; ++r) enc.append(parts[k]["encoding"]);
      d["encoding"] = enc;
      continue;
    }
    py::list pieces;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      if (parts[k].contains(c)) {
        pieces.append(parts[k][c.c_str()]);
        continue;
      }
      py::array_t<double> nan(rows[k]);  // an encoding without this column: NaN on its rows
      std::fill(nan.mutable_data(), nan.mutable_data() + rows[k], std::numeric_limits<double>::quiet_NaN());
      pieces.append(nan);
    }
    const auto lag_shape = py::array(pieces[0]).ndim();
    d[c.c_str()] = py::module_::import("numpy").attr(lag_shape == 2 ? "vstack" : "concatenate")(pieces);
  }
  return d;
}

namespace {

py::dict kernel_one(const std::string& text, const py::object& lags_in, double rho, std::optional<double> seq_len,
                    const std::optional<std::vector<std::string>>& columns) {
  KernelRequest request;
  request.encodings = {text};
  request.lags_given = !lags_in.is_none();
  request.rho = rho;
  request.seq_len = seq_len;
  request.matrix = true;  // numpy columns, no text: the budget counts those
  const KernelPlan plan = interruptible([&] { return plan_kernel(request); });  // a huge encoding's blocks take seconds
  const Encoding& e = plan.encodings.front();
  const bool rf = plan.any_rf;
  const auto plain = plain_rope(e);
  // The library's check of columns= (the command line's --columns), else every column the rows fill.
  const std::vector<std::string> names =
      columns ? checked_kernel_columns(request, plan, *columns) : kernel_plan_columns(plan);
  // 1-D lags given as an array are read in place (no copy when they are float64 and contiguous already).
  const auto flat = plan.k == 1 ? lag_array(lags_in, request.command) : std::nullopt;
  const auto held = [&] {
    if (flat) return Lags(Eigen::Map<const Eigen::MatrixXd>(flat->data(), flat->size(), 1));
    return lags_in.is_none() ? kernel_lags(request, plan) : to_lags(lags_in, plan.k, request.command);
  };
  const Eigen::Index n = flat ? flat->size() : 0;
  py::dict d;
  // A fixed sum of rotations (rotary_spectrum.hpp) writes straight into the returned arrays, only the columns asked
  // for; one call for every lag, so an even grid of lags takes the grid kernel. Plain RoPE's own columns alike
  // (rope_kernel_columns: the sine sums in the vector kernels).
  if (flat && !rf) {
    interruptible([&] { return check_kernel_budget(request, plan, n, static_cast<double>(n)), 0; });  // builds the blocks
    warn_notes("kernel", e);
    auto out = [&](const char* name) { return py::array_t<double>(wants(names, name) ? n : 0); };
    auto ptr = [](py::array_t<double>& a) { return a.size() ? a.mutable_data() : nullptr; };
    py::array_t<double> kern_out = out("kernel"), var_out = out("content_variance"), sres_out = out("sine_residual"),
                        cont_out = out("continuum"), csin_out = out("continuum_sine");
    double *kp = ptr(kern_out), *vp = ptr(var_out);
    if (n == 0 || interruptible([&] {
          if (!rotary_kernel(e, flat->data(), static_cast<std::size_t>(n), rho, seq_len, kp, nullptr, vp, true))
            return false;
          if (plain)
            rope_kernel_columns(*plain, plain->frequencies(), flat->data(), static_cast<std::size_t>(n),
                                ptr(sres_out), ptr(cont_out), ptr(csin_out), true);
          return true;
        })) {
      for (const std::string& c : names) {
        if (c == "encoding") d["encoding"] = spelling(e);
        if (c == "lag") d["lag"] = py::array_t<double>(n, flat->data());
        if (c == "kernel") d["kernel"] = kern_out;
        if (c == "content_variance") d["content_variance"] = var_out;
        if (c == "sine_residual") d["sine_residual"] = sres_out;
        if (c == "continuum") d["continuum"] = cont_out;
        if (c == "continuum_sine") d["continuum_sine"] = csin_out;
      }
      return d;
    }
  }
  const Lags lags = held();
  interruptible([&] { return check_kernel_budget(request, plan, lags.rows(), static_cast<double>(lags.rows())), 0; });
  check_kernel_lags(request, plan, lags);
  if (!flat || rf) warn_notes("kernel", e);
  const Eigen::Index rows = lags.rows();
  Eigen::VectorXd kern(rows), var(rows), expected(rf ? rows : 0), fvar(rf ? rows : 0), sres(plain ? rows : 0),
      cont(plain ? rows : 0), csin(plain ? rows : 0);
  const std::vector<double> plain_theta = plain ? plain->frequencies() : std::vector<double>{};
  interruptible([&] {
    const auto kr = kernel_block(request, plan, 0, lags);
    for (Eigen::Index i = 0; i < rows; ++i) {
      const KernelRow& r = kr[static_cast<std::size_t>(i)];
      kern[i] = r.kernel;
      var[i] = r.content_variance;
      if (rf) expected[i] = r.expected_kernel, fvar[i] = r.frequency_variance;
    }
    // Plain RoPE's own columns as the command line computes them (each lag on its own).
    if (plain)
      rope_kernel_columns(*plain, plain_theta, lags.data(), static_cast<std::size_t>(rows), sres.data(), cont.data(),
                          csin.data());
    return 0;
  });
  for (const std::string& c : names) {
    if (c == "encoding") d["encoding"] = spelling(e);
    if (c == "lag") d["lag"] = lag_column(lags);
    if (c == "kernel") d["kernel"] = column(kern);
    if (c == "content_variance") d["content_variance"] = column(var);
    if (c == "expected_kernel") d["expected_kernel"] = column(expected);
    if (c == "frequency_variance") d["frequency_variance"] = column(fvar);
    if (c == "sine_residual") d["sine_residual"] = column(sres);
    if (c == "continuum") d["continuum"] = column(cont);
    if (c == "continuum_sine") d["continuum_sine"] = column(csin);
  }
  return d;
}

}  // namespace

py::dict py_frequencies(const std::string& text, std::optional<double> seq_len, bool float32,
                        const std::string& convention_text) {
  FrequenciesRequest request;
  request.encoding = text;
  request.seq_len = seq_len;
  request.float32 = float32;
  request.convention = convention_text;
  const FrequenciesPlan plan = interruptible([&] { return plan_frequencies(request); });
  check_frequencies_budget(request, plan);
  FrequencyRows f = frequency_rows(request, plan);
  warn_notes("frequencies", plan.encoding);
  const int k = plan.k;
  py::dict d;
  d["encoding"] = spelling(plan.encoding);
  if (plan.sum) d["part"] = int_column(f.part);
  d["i"] = int_column(f.index);
  auto axes = [&](const std::string& stem, std::vector<std::vector<double>>& cols) {
    if (k == 1) d[py::str(stem)] = column(std::move(cols[0]));
    else
      for (int j = 0; j < k; ++j) d[py::str(fmt::format("{}_{}", stem, j))] = column(std::move(cols[static_cast<std::size_t>(j)]));
  };
  axes("theta", f.theta);
  d["wavelength"] = column(std::move(f.wavelength));
  d["attention_factor"] = column(std::move(f.attention_factor));
  if (float32) axes("theta_float32", f.theta32);
  return d;
}

py::tuple py_features(const py::object& encoding, const py::object& lags_in, const py::object& model,
                      const py::object& layer_type) {
  const auto layer = bound_model_layer("ropekit features", "--encoding", encoding, model, layer_type);
  if (!layer && encoding.is_none()) bad("ropekit features", "--encoding", "None", "given, or model");
  FeaturesRequest request;
  request.encoding = layer ? layer->encoding
                           : cast_arg<std::string>(encoding, "ropekit features", "--encoding", "a str");
  request.lags_given = !lags_in.is_none();
  request.matrix = true;  // one float64 matrix, no text: the budget counts that
  const FeaturesPlan plan = interruptible([&] { return plan_features(request); });
  Lags lags;
  if (lags_in.is_none()) {
    lags = feature_lags(request, plan);
  } else {
    lags = to_lags(lags_in, plan.k, request.command);
    check_feature_lags(request, plan, lags);
  }
  check_features_budget(request, plan, lags.rows());
  warn_notes("features", plan.encoding);
  Features f = interruptible([&] { return feature_rows(request, plan, lags); });
  // rows = lags, cols = features; column-major, as Eigen holds it (numpy sees a Fortran-ordered array, no copy).
  // A model's layer type adds the command line's first column, layer_type: its label on every row.
  const auto rows = static_cast<std::size_t>(f.values.rows());
  if (layer)
    return py::make_tuple(py::cast(std::move(f.values)), py::cast(f.names),
                          py::cast(std::vector<std::string>(rows, layer->label)));
  return py::make_tuple(py::cast(std::move(f.values)), py::cast(f.names));
}

py::dict py_list_encodings(bool verbose) {
  std::vector<std::string> s, a, o, f, k, e;
  for (const auto& x : encoding_families()) {
    s.push_back(x.spelling), a.push_back(x.aliases), o.push_back(x.operator_), f.push_back(x.features);
    k.push_back(x.keys), e.push_back(x.example);
  }
  py::dict d;
  d["spelling"] = s, d["aliases"] = a, d["operator"] = o, d["features"] = f;
  if (verbose) d["keys"] = k, d["example"] = e;
  return d;
}

py::dict py_list_schemes() {
  std::vector<std::string> scheme, key, def, constraint, meaning, hf;
  for (const auto& x : scheme_key_infos()) {
    scheme.push_back(x.scheme), key.push_back(x.key), def.push_back(x.default_value);
    constraint.push_back(x.constraint), meaning.push_back(x.meaning), hf.push_back(x.hf_key);
  }
  py::dict d;
  d["scheme"] = scheme, d["key"] = key, d["default"] = def, d["constraint"] = constraint, d["meaning"] = meaning;
  d["transformers key"] = hf;
  return d;
}

}  // namespace ropekit::bindings
