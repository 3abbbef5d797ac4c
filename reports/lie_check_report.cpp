// A Lie check (lie/lie_check.hpp) as `ropekit lie check` and the nd-rope probe print it: JSON with every number and
// verdict, and a Markdown report of the verdicts and how they were measured.
#include "reports/lie_check_report.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "reports/table.hpp"
#include "ropekit/core/error.hpp"

namespace ropekit {

namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

}  // namespace

std::string lie_sci(double v) { return std::isfinite(v) ? fmt::format("{:.2e}", v) : format_number(v); }

std::string lie_verdict(bool b) { return b ? "yes" : "**no**"; }

std::string lie_point(const std::vector<int>& x) { return fmt::format("({})", fmt::join(x, ", ")); }

std::string lie_check_json(const LieCheck& c, const std::string& source) {
  ordered_json j;
  j["file"] = source;
  j["dimension"] = c.dim;
  j["axes"] = c.axes;
  j["window"] = c.window;
  j["route"] = c.route;
  j["skew_defect"] = number(c.skew_defect);
  j["skew_tolerance"] = number(c.skew_tolerance);
  j["max_commutator"] = number(c.max_commutator);
  j["commutator_tolerance"] = number(c.commutator_tolerance);
  j["rank"] = c.rank;
  j["rank_tolerance"] = number(c.rank_tolerance);
  j["singular_values"] = ordered_json::array();
  for (double s : c.singular_values) j["singular_values"].push_back(number(s));
  j["masa_bound"] = c.masa_bound;
  j["within_masa_bound"] = c.within_masa_bound;
  if (c.has_mixing) {
    j["orthogonality_defect"] = number(c.orthogonality_defect);
    j["orthogonality_tolerance"] = number(c.orthogonality_tolerance);
    j["det_q"] = number(c.det_q);
  } else {
    j["orthogonality_defect"] = nullptr;  // no Q in the file
  }
  j["relativity_defect"] = number(c.relativity_defect);
  j["relativity_tolerance"] = number(c.relativity_tolerance);
  j["window_scale"] = number(c.window_scale);
  j["pairs_checked"] = c.pairs_checked;
  j["min_position_distance"] = number(c.min_position_distance);
  j["closest_positions"] = {c.closest_x, c.closest_y};
  j["distances_checked"] = c.distances_checked;
  j["distances_exhaustive"] = c.distances_exhaustive;
  j["distance_method"] = c.distance_method;
  j["skew"] = c.skew;
  j["commuting"] = c.commuting;
  j["independent"] = c.independent;
  j["relativity"] = c.relativity;
  j["reversibility"] = c.reversibility;
  if (c.has_mixing) j["orthogonal"] = c.orthogonal;
  return j.dump(2) + "\n";
}

std::string lie_check_markdown(const LieCheck& c, const std::string& source) {
  Table t;
  t.columns = {"property", "verdict", "measured", "threshold"};
  t.add_row({"skew", lie_verdict(c.skew), "max_i |B_i + B_i^T|_F = " + lie_sci(c.skew_defect),
             "<= 16 n eps max_i |B_i|_F = " + lie_sci(c.skew_tolerance)});
  t.add_row({"commuting", lie_verdict(c.commuting), "max_{i<j} |[B_i, B_j]|_F = " + lie_sci(c.max_commutator),
             "<= 16 n eps max_i |B_i|_F^2 = " + lie_sci(c.commutator_tolerance)});
  t.add_row({"independent", lie_verdict(c.independent), fmt::format("rank {} of N = {}", c.rank, c.axes),
             "singular values > max(n^2, N) eps sigma_max = " + lie_sci(c.rank_tolerance)});
  t.add_row({"N <= floor(n/2)", lie_verdict(c.within_masa_bound), fmt::format("N = {}", c.axes),
             fmt::format("floor(n/2) = {} (MASA dimension)", c.masa_bound)});
  t.add_row({"relativity", lie_verdict(c.relativity),
             fmt::format("max |R(x1)^T R(x2) - R(x2 - x1)|_F = {} ({} pairs)", lie_sci(c.relativity_defect), c.pairs_checked),
             fmt::format("<= 32 n eps (1 + s) = {}, s = {}", lie_sci(c.relativity_tolerance), lie_sci(c.window_scale))});
  t.add_row({"reversibility", lie_verdict(c.reversibility),
             fmt::format("min |R(x) - R(y)|_F = {} at {} vs {}", lie_sci(c.min_position_distance), lie_point(c.closest_x),
                         lie_point(c.closest_y)),
             "independent and > the relativity tolerance"});
  if (c.has_mixing)
    t.add_row({"orthogonal Q", lie_verdict(c.orthogonal),
               fmt::format("|Q^T Q - I|_F = {}, det Q = {:.15g}", lie_sci(c.orthogonality_defect), c.det_q),
               "<= 16 n eps = " + lie_sci(c.orthogonality_tolerance)});
  std::string md = fmt::format("# Lie check of `{}`\n\n- n = {}, N = {}, window {{0..{}}}^{}, route: {}\n", source, c.dim,
                               c.axes, c.window - 1, c.axes, c.route);
  md += fmt::format("- reversibility scan: {} comparisons; {}\n\n", c.distances_checked, c.distance_method);
  md += to_markdown(t);
  return md;
}

// ------------------------------------------------------------------------------------------------

}  // namespace ropekit
