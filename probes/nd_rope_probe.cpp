// The nd-rope probe: relativity R(x1)^T R(x2) = R(x2 - x1) and reversibility (x -> R(x) injective on a
// window) of R(x) = exp(sum_i x_i B_i) for the generator families of spec nd-rope.md section 1, with the
// verdict thresholds of LieCheck (lie.hpp), the closed-form torus checked against Eigen's matrix
// exponential, and the induced kernel Phi(dx) = tr R(dx) / n of axial against mixed RoPE.
#include "probes/nd_rope_probe.hpp"

#include <cmath>
#include <filesystem>
#include <numbers>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/lie_check_report.hpp"
#include "reports/table.hpp"
#include "reports/output.hpp"
#include "ropekit/core/error.hpp"

namespace ropekit {

namespace {

struct Case {
  std::string name;
  GeneratorSet set;
};

GeneratorSet with_mixing(GeneratorSet set, MixingKind kind, std::uint64_t seed) {
  set.mixing = orthogonal(random_mixing(kind, set.dim, seed));
  set.description += std::string("; Q by ") + to_string(kind);
  return set;
}

}  // namespace

ProbeResult run_nd_rope_probe(const ProbeContext& ctx) {
  const std::string name = "nd-rope";
  constexpr int n = 64, window = 32;
  constexpr std::uint64_t seed = 1;
  constexpr double base = 1e4;
  LieCheckOptions opt;
  opt.window = window;

  // Proportional: the 1-D RoPE frequencies on axis 0 and twice them on axis 1 (B_1 = 2 B_0).
  Eigen::MatrixXd prop(2, n / 2);
  prop.row(0) = torus_frequencies(gen::Axial{n, 1, base}).row(0);
  prop.row(1) = 2.0 * prop.row(0);
  // Commensurate: n = 4, one axis, frequencies 2 pi / 8 and 2 pi / 4: R(x + 8) = R(x), inside the window.
  Eigen::MatrixXd comm(1, 2);
  comm << 2 * std::numbers::pi / 8, 2 * std::numbers::pi / 4;
  // Too many axes: N = 5 commuting generators in so(8), whose MASA has dimension 4.
  const Eigen::MatrixXd crowded = random_torus_frequencies(5, 8, base, seed);
  // A non-orthogonal mixing (Q = I + 0.05 G): Q T Q^T stays skew but stops commuting.
  GeneratorSet skewed = generators(gen::Axial{n, 2, base});
  {
    Eigen::MatrixXd Q = Eigen::MatrixXd::Identity(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) Q(i, j) += 0.05 * std::sin(1.0 + 7.0 * i + 3.0 * j);  // deterministic
    skewed.mixing = Q;
    skewed.description += "; Q = I + 0.05 sin(1 + 7i + 3j) (not orthogonal)";
  }

  const GeneratorSet axial = generators(gen::Axial{n, 2, base});
  std::vector<Case> cases = {
      {"axial 2-D", axial},
      {"axial 3-D", generators(gen::Axial{n, 3, base})},
      {"mixed 2-D (Heo et al.)", generators(gen::Mixed{n, 2, base, seed})},
      {"axial 2-D, Cayley-mixed", with_mixing(axial, MixingKind::cayley, seed)},
      {"axial 2-D, exp-mixed", with_mixing(axial, MixingKind::exp, seed)},
      {"axial 2-D, Givens-mixed", with_mixing(axial, MixingKind::givens, seed)},
      {"LieRE-random 2-D (dense)", generators(gen::Random{n, 2, 1.0, seed})},
      {"proportional (B_1 = 2 B_0)", generators(gen::Torus{prop})},
      {"commensurate 1-D (n = 4, periods 8 and 4)", generators(gen::Torus{comm})},
      {"5 axes in so(8) (N > floor(n/2))", generators(gen::Torus{crowded})},
      {"axial 2-D, non-orthogonal Q", skewed},
  };

  Table t;
  t.columns = {"generators", "n", "N", "route", "skew defect", "max commutator", "rank", "relativity defect",
               "tolerance", "min distance", "skew", "commuting", "independent", "relativity", "reversibility"};
  Table data;
  data.columns = {"generators", "n", "N", "window", "route", "skew_defect", "max_commutator", "rank",
                  "relativity_defect", "relativity_tolerance", "min_position_distance", "distances_exhaustive",
                  "orthogonality_defect", "skew", "commuting", "independent", "relativity", "reversibility"};
  std::string notes;
  for (const auto& cs : cases) {
    const LieCheck c = check(cs.set, opt);
    t.add_row({cs.name, std::int64_t{c.dim}, std::int64_t{c.axes}, c.route, lie_sci(c.skew_defect), lie_sci(c.max_commutator),
               std::int64_t{c.rank}, lie_sci(c.relativity_defect), lie_sci(c.relativity_tolerance),
               lie_sci(c.min_position_distance) + (c.distances_exhaustive ? "" : " (sampled)"), lie_verdict(c.skew),
               lie_verdict(c.commuting), lie_verdict(c.independent), lie_verdict(c.relativity), lie_verdict(c.reversibility)});
    data.add_row({cs.name, std::int64_t{c.dim}, std::int64_t{c.axes}, std::int64_t{c.window}, c.route, c.skew_defect,
                  c.max_commutator, std::int64_t{c.rank}, c.relativity_defect, c.relativity_tolerance,
                  c.min_position_distance, c.distances_exhaustive, c.has_mixing ? Cell{c.orthogonality_defect} : Cell{},
                  c.skew, c.commuting, c.independent, c.relativity, c.reversibility});
    notes += fmt::format("- {}: {}. Reversibility scan: {} comparisons, {}; closest positions {} and {}.{}\n", cs.name,
                         cs.set.description, c.distances_checked, c.distance_method, lie_point(c.closest_x),
                         lie_point(c.closest_y),
                         c.has_mixing ? fmt::format(" |Q^T Q - I|_F = {}, det Q = {:.15g}.", lie_sci(c.orthogonality_defect),
                                                    c.det_q)
                                      : "");
  }

  // Independent routes: the closed-form torus against Eigen's matrix exponential of sum x_i B_i.
  Table routes;
  routes.columns = {"generators", "positions", "max |R_closed(x) - R_exp(x)|_F", "max |Phi_closed - Phi_exp|"};
  for (const auto& cs : cases) {
    const Encoder enc(cs.set);
    if (!enc.has_closed_form()) continue;
    double diff = 0, kdiff = 0;
    int count = 0;
    for (int a = 0; a < window; a += 5)
      for (int b = 0; b < window; b += 7) {
        Eigen::VectorXd x = Eigen::VectorXd::Zero(enc.axes());
        x[0] = a;
        if (enc.axes() > 1) x[1] = b;
        diff = std::max(diff, (enc(x, Route::closed_form) - enc(x, Route::matrix_exp)).norm());
        kdiff = std::max(kdiff, std::fabs(enc.kernel(x, Route::closed_form) - enc.kernel(x, Route::matrix_exp)));
        ++count;
      }
    routes.add_row({cs.name, std::int64_t{count}, lie_sci(diff), lie_sci(kdiff)});
  }

  // Induced kernel for isotropic content: axial separates the axes, mixed couples them.
  const GeneratorSet mixed = cases[2].set;
  Table kernel;
  kernel.columns = {"dx", "Phi axial", "Phi mixed"};
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {4, 0}, {4, 4}, {16, 0}, {16, 16}, {31, 31}}) {
    Eigen::MatrixXd dx(1, 2);
    dx << a, b;
    kernel.add_row({fmt::format("({}, {})", a, b), induced_kernel(axial, dx)[0], induced_kernel(mixed, dx)[0]});
  }

  const std::string details = fmt::format(
      "- head dimension n = {}, base {}, seed {}; window {{0..{}}}^N; {} relativity pairs (the two far corners and "
      "seeded random pairs of window positions); reversibility scan capped at {} matrix exponentials or {} closed-form "
      "differences\n"
      "- R(x) = exp(sum_i x_i B_i) with B_i = Q T_i Q^T; closed form Q diag_b(R(w_b . x)) Q^T on the torus, Eigen's "
      "MatrixFunctions otherwise (the route column)\n"
      "- Cayley convention Q = (I - S)(I + S)^-1 (S skew, strict upper entries N(0, 1)); exp: Q = exp(S); Givens: "
      "product over the pairs (i < j) in lexicographic order, angles uniform in [-pi, pi)\n",
      n, format_number(base), seed, window - 1, opt.pairs, opt.max_exp, opt.max_differences);
  std::string md = report_header("N-dimensional RoPE: Lie-algebra checks of relativity and reversibility", ctx.command,
                                 details);
  md += "\nRelativity holds exactly when the generators are skew and commute; reversibility needs them linearly "
        "independent (so N <= floor(n/2)) and no two window positions may share an encoding (spec nd-rope.md "
        "section 1).\n\n";
  md += "## Verdicts\n\n" + to_markdown(t) + "\n";
  md += "Thresholds (eps = 2^-52, Frobenius norms): skew if max_i |B_i + B_i^T| <= 16 n eps max_i |B_i|; commuting "
        "if max |[B_i, B_j]| <= 16 n eps max_i |B_i|^2 (rounding of one n-term product); independent if rank = N, "
        "counting singular values of [vec B_i] above max(n^2, N) eps sigma_max; relativity if the defect <= 32 n eps "
        "(1 + s), s = (W-1) sum_i |B_i|_2 the largest generator argument in the window (exp of an argument of norm s "
        "carries ~s eps, a product of n-term dot products ~n eps); reversibility if independent and the smallest "
        "distance exceeds that same tolerance.\n\n";
  md += "## The sets\n\n" + notes + "\n";
  md += "## Independent routes\n\nClosed-form torus against Eigen's matrix exponential, on positions (a, b), "
        "a in 0:5:32, b in 0:7:32 (axis 0 only for 1-D sets):\n\n" +
        to_markdown(routes) + "\n";
  md += "## Induced kernel\n\nPhi(dx) = tr R(dx) / n = (2/n) sum_b cos(w_b . dx) for isotropic content; axial "
        "RoPE's kernel is a sum of one-axis terms, mixed RoPE's planes see both coordinates:\n\n" +
        to_markdown(kernel) + "\n";

  namespace fs = std::filesystem;
  const std::string md_path = (fs::path(ctx.out_dir) / (name + ".md")).string();
  const std::string csv_path = (fs::path(ctx.out_dir) / (name + ".csv")).string();
  write_file_atomic(csv_path, to_csv(data));
  write_file_atomic(md_path, md);
  int holds = 0;
  for (const auto& r : data.rows) holds += std::get<bool>(r[data.column("relativity")]) && std::get<bool>(r[data.column("reversibility")]);
  return ProbeResult{{md_path, csv_path},
                     fmt::format("{} generator sets, {} with relativity and reversibility", data.rows.size(), holds)};
}

}  // namespace ropekit
