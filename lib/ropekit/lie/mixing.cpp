#include "ropekit/lie/mixing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <mutex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <unsupported/Eigen/MatrixFunctions>

#include "ropekit/core/enum_text.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/core/parallel.hpp"
#include "ropekit/core/keep_max.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/lie/lie_detail.hpp"

namespace ropekit {

using namespace lie_detail;

namespace {

// The stream (ropekit::Rng key) of random_mixing, distinct from the generator families' (generators.cpp).
constexpr std::uint64_t kMixingStream = 0x4D4958ull;

Eigen::MatrixXd skew_from_upper(int n, Rng& rng) {
  Eigen::MatrixXd S = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      S(i, j) = rng.normal();
      S(j, i) = -S(i, j);
    }
  return S;
}
void check_skew_param(std::string_view where, const Eigen::MatrixXd& S) {
  if (S.rows() != S.cols() || S.rows() < 1 || S.rows() > kMaxLieDim)
    throw_bad_value(where, "S", fmt::format("{}x{}", S.rows(), S.cols()),
                    fmt::format("square, n x n with 1 <= n <= {}", kMaxLieDim));
  check_matrix_finite(where, "S", S);
  const double defect = (S + S.transpose()).norm();
  if (!(defect <= 16.0 * S.rows() * kEps * S.norm()))
    throw_bad_value(where, "|S + S^T|_F", format_number(defect), "0, S skew-symmetric");
}

constexpr EnumTable<MixingKind, 3> kMixingKinds{
    {{MixingKind::cayley, "cayley"}, {MixingKind::exp, "exp"}, {MixingKind::givens, "givens"}}};
}  // namespace


MixingKind parse_mixing_kind(const std::string& name, const Where& where) {
  return parse_enum(kMixingKinds, name, where, "mix");
}

const char* to_string(MixingKind kind) { return to_text(kMixingKinds, kind).data(); }

Eigen::MatrixXd orthogonal(const Mixing& mixing) {
  return std::visit(
      Overloaded{
          [](const mix::Cayley& c) -> Eigen::MatrixXd {
            check_skew_param("Cayley mixing", c.S);
            const Eigen::Index n = c.S.rows();
            const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(n, n);
            // (I - S) and (I + S)^{-1} commute, so Q = (I + S)^{-1} (I - S); I + S is never singular (S skew).
            return (I + c.S).partialPivLu().solve(I - c.S);
          },
          [](const mix::Exp& e) -> Eigen::MatrixXd {
            check_skew_param("exponential mixing", e.S);
            return e.S.exp();
          },
          [](const mix::Givens& g) -> Eigen::MatrixXd {
            const Where where("Givens mixing");
            check_dim(where, g.dim, false);
            const std::size_t count = static_cast<std::size_t>(g.dim) * (g.dim - 1) / 2;
            if (g.angles.size() != count)
              throw_bad_value(where, "angles", fmt::format("{} values", g.angles.size()),
                              fmt::format("n(n-1)/2 = {} values", count));
            Eigen::MatrixXd Q = Eigen::MatrixXd::Identity(g.dim, g.dim);
            std::size_t k = 0;
            for (int i = 0; i < g.dim; ++i)
              for (int j = i + 1; j < g.dim; ++j, ++k) {
                const double a = g.angles[k];
                check_finite(where.context, fmt::format("angles[{}]", k), a);
                const double c = std::cos(a), s = std::sin(a);
                const Eigen::VectorXd qi = Q.col(i), qj = Q.col(j);  // Q <- Q G(i, j, a)
                Q.col(i) = c * qi + s * qj;
                Q.col(j) = -s * qi + c * qj;
              }
            return Q;
          },
      },
      mixing);
}

Mixing random_mixing(MixingKind kind, int dim, std::uint64_t seed) {
  check_dim(Where("random mixing"), dim, false);
  Rng rng(seed, kMixingStream);
  switch (kind) {
    case MixingKind::cayley: return mix::Cayley{skew_from_upper(dim, rng)};
    case MixingKind::exp: return mix::Exp{skew_from_upper(dim, rng)};
    case MixingKind::givens: {
      mix::Givens g{dim, {}};
      g.angles.resize(static_cast<std::size_t>(dim) * (dim - 1) / 2);
      for (auto& a : g.angles) a = std::numbers::pi * (2.0 * rng.uniform() - 1.0);
      return g;
    }
  }
  throw std::logic_error("random_mixing: unknown kind");
}

}  // namespace ropekit
