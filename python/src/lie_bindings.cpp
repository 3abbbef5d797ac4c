// ropekit.lie_check: the Lie-algebra checks of N-D RoPE generators (as `ropekit lie check`).
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
    check_real(generators, command, "generators");
    if (!mixing.is_none()) check_real(mixing, command, "mixing");
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
    if (!mixing.is_none()) set.mixing = cast_arg<Eigen::MatrixXd>(mixing, command, "mixing", "a 2-D array of numbers or None");
  }
  where.rename("generators", "generators of '" + source + "'");
  LieCheckOptions o;
  o.window = window;
  o.pairs = pairs;
  o.max_exp = max_exp;
  o.seed = seed;
  o.route = parse_route_option(command, route_text);
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

}  // namespace ropekit::bindings
