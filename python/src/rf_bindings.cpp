// ropekit.spectrum_kernel, verify_master, design and list_spectra: RF-RoPE's spectral kernels, the Monte Carlo
// check of its Master Theorem and inverse design (as `ropekit kernel --spectrum`, `verify master`, `design`).
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
#include "ropekit/commands/verify_request.hpp"
#include "ropekit/design/design.hpp"
#include "ropekit/design/inverse_design.hpp"
#include "ropekit/spectral/spectrum.hpp"
#include "ropekit/version.hpp"
#include "targets/kernel_table.hpp"
#include "targets/target.hpp"

namespace ropekit::bindings {

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
  // The arguments bound to the library's request (commands/verify_request.hpp), as the command line binds its options;
  // Python objects are read here, with the GIL.
  VerifyRequest r;
  const std::string& command = r.command;
  r.spectrum = spectrum;
  const int k = dims(parse_spectrum(spectrum));  // the shape lag arrays are read in
  if (!draw_from.is_none()) r.draw_from = cast_arg<std::string>(draw_from, command, "draw_from", "a spectrum spelling (str) or None");
  r.power = power;
  if (!lags_in.is_none()) r.lags = to_lags(lags_in, k, command);
  r.blocks = blocks;
  r.trials = trials;
  r.seed = seed;
  r.threads = threads;
  r.sampling = sampling;
  r.alpha = alpha;
  if (!content_in.is_none()) r.content = cast_arg<std::string>(content_in, command, "content", "an encoding spelling (str) or None");
  auto numbers = [&](const py::object& o, const std::string& name) {
    const Eigen::VectorXd v = to_lags(o, 1, command, name).col(0);
    return std::vector<double>(v.data(), v.data() + v.size());
  };
  if (!q_in.is_none()) r.q = numbers(q_in, "--q");
  if (!k_in.is_none()) r.k = numbers(k_in, "--k");
  const VerifyReport rep = interruptible([&] { return verify_master(r); });
  std::vector<double> expected, mean, se, z, ve, vo;
  std::vector<bool> pass;
  Lags lags(static_cast<Eigen::Index>(rep.lags.size()), k);
  for (std::size_t i = 0; i < rep.lags.size(); ++i) {
    const auto& l = rep.lags[i];
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
  s["pass"] = rep.mean_pass;
  s["max_abs_z"] = rep.max_abs_z;
  s["z_critical"] = rep.z_critical;
  s["alpha"] = rep.alpha;
  s["alpha_per_lag"] = rep.alpha_per_lag;
  s["blocks"] = rep.blocks;
  s["trials"] = rep.trials;
  s["spectrum"] = rep.spectrum;
  s["draw"] = rep.draw;
  s["seed"] = seed;
  return py::make_tuple(d, s);
}

// ---------------------------------------------------------------------------------------------
// design (design/inverse_design.hpp, as `ropekit design`)

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
  if (r.seed_given) r.seed = cast_arg<std::uint64_t>(seed_in, command, "seed", "an integer in [0, 2^64) or None");
  // Python objects are read here, with the GIL: the work below runs without it.
  if (py::isinstance<py::str>(lags_in)) r.lags_text = cast_arg<std::string>(lags_in, command, "lags", "a lag spelling or an array");
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

py::dict py_list_spectra() {
  std::vector<std::string> s, w, k;
  for (const auto& f : spectrum_families()) s.push_back(f.spelling), w.push_back(f.frequencies), k.push_back(f.kernel);
  py::dict d;
  d["spelling"] = s, d["frequencies"] = w, d["Phi(Dp)"] = k;
  return d;
}

}  // namespace ropekit::bindings
