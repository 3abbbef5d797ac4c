// Fixed-basis probe phases: trig table, features, ridge fits, whole in-process runs.
#include <fmt/format.h>

#include "bench/bench.hpp"
#include "config/fit_config_yaml.hpp"
#include "ropekit/fit/fit_run.hpp"
#include "ropekit/encodings/basis.hpp"
#include "ropekit/core/embedded.hpp"
#include "ropekit/fit/linear_fit.hpp"

namespace ropekit::bench {

void fixed_basis_suite() {
  fmt::print("| config | phase | median ms |\n|---|---|---|\n");
  for (const char* path : {"configs/paper-table3-toy.yaml", "configs/paper-table11-structured.yaml",
                           "configs/paper-tables6-16-highjet.yaml"}) {
    const FitConfig c = parse_fit_config(embedded_file(path), path);
    const int T = 8192;
    const Eigen::VectorXd lags = Eigen::VectorXd::LinSpaced(T, 0, T - 1);
    fmt::print("| {} | trig table ({} lags x {} freqs) | {:.2f} |\n", path, T, c.basis.num_freqs,
               median_ms([&] { BasisEvaluator ev(c.basis, lags); }, 20));
    const BasisEvaluator ev(c.basis, lags);
    fmt::print("| {} | features, all methods | {:.2f} |\n", path, median_ms([&] {
                 for (const auto& m : c.methods) (void)ev.features(parse_method(m));
               }, 20));
    std::vector<Eigen::MatrixXd> xs;
    for (const auto& m : c.methods) xs.push_back(ev.features(parse_method(m)).topRows(c.basis.train_context));
    const Eigen::MatrixXd Y = Eigen::MatrixXd::Random(c.basis.train_context, static_cast<Eigen::Index>(c.targets.size()));
    fmt::print("| {} | ridge fits (QR + rank + cond), all methods | {:.2f} |\n", path, median_ms([&] {
                 for (const auto& x : xs) (void)fit_ridge(x, Y, RidgeOptions{c.ridge});
               }, 20));
    fmt::print("| {} | run_fixed_basis, whole run in process | {:.2f} |\n", path,
               median_ms([&] { (void)run_fixed_basis(c); }, 20));
  }
  // Why fit_ridge's QR uses an 8-column panel: Eigen's blocked Householder QR at its default (48) and narrower,
  // on the fixed-basis designs' shapes (train 1024 rows; the widest Table 3 method and a middle one).
  fmt::print("\n| QR panel width | 1024 x 65 ms | 1024 x 133 ms |\n|---|---|---|\n");
  for (const Eigen::Index panel : {4, 8, 16, 32, 48}) {
    double ms[2];
    int i = 0;
    for (const Eigen::Index cols : {65, 133}) {
      const Eigen::MatrixXd a0 = Eigen::MatrixXd::Random(1024, cols);
      Eigen::MatrixXd a;
      Eigen::VectorXd h(cols), temp(cols);
      ms[i++] = median_ms([&] {
        a = a0;
        Eigen::internal::householder_qr_inplace_blocked<Eigen::MatrixXd, Eigen::VectorXd>::run(a, h, panel, temp.data());
      }, 50);
    }
    fmt::print("| {}{} | {:.3f} | {:.3f} |\n", panel, panel == 8 ? " (used)" : panel == 48 ? " (Eigen's default)" : "",
               ms[0], ms[1]);
  }
}

}  // namespace ropekit::bench
