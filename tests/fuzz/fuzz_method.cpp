// Fuzz harness: method names and spellings (parse_method), then the readable-name round trip and the
// features at lags 0..3 with tiny run parameters (F = 3, h = 8, L = 4), raw and bounded shear time.

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/encodings/basis.hpp"
#include "ropekit/encodings/method.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    const Method m = parse_method(fuzz::as_text(data, size));
    const std::string name = spelling(m);
    const Method back = fuzz::must("parse_method(spelling(m))", [&] { return parse_method(name); });
    fuzz::require(spelling(back) == name, fmt::format("round trip: '{}' -> '{}'", name, spelling(back)));

    Eigen::VectorXd lags(4);
    lags << 0, 1, 2, 3;
    for (bool bounded : {true, false}) {
      BasisParams p;
      p.num_freqs = 3;
      p.head_dim = 8;
      p.gamma = 0.01;
      p.train_context = 4;
      p.bounded_tau = bounded;
      const Eigen::MatrixXd X = features(m, p, lags);
      const auto names = feature_names(m, p);
      fuzz::require(X.rows() == 4 && X.cols() == n_features(m, p) && names.size() == static_cast<std::size_t>(X.cols()),
                    fmt::format("'{}': {} x {} features, n_features {}, {} names", name, X.rows(), X.cols(),
                                n_features(m, p), names.size()));
      fuzz::require(X.allFinite(), fmt::format("'{}': non-finite features", name));
      // Every method's first column is the constant 1 (spec section 2, column lists).
      fuzz::require(names.front() == "1" && (X.col(0).array() == 1).all(), fmt::format("'{}': first column", name));
      // At lag 0 every column is 1 (cosines, the constant, E = 1 with that^0) or 0 (sines, x, that^p, p >= 1).
      for (Eigen::Index j = 0; j < X.cols(); ++j)
        fuzz::require(X(0, j) == 0 || X(0, j) == 1,
                      fmt::format("'{}': column {} ({}) = {} at lag 0", name, j, names[static_cast<std::size_t>(j)], X(0, j)));
    }
  });
}
