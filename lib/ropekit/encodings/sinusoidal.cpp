#include "ropekit/encodings/sinusoidal.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/rng.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit::enc {

namespace {

const std::array<Key<Sinusoidal>, 3> kKeys = {{
    {"dim", &Sinusoidal::dim, KeyKind::integer, Fallback::dim, 2, 4096, true},
    {"base", &Sinusoidal::base, KeyKind::positive, Fallback::base},
    {"seed", &Sinusoidal::seed, KeyKind::seed},
}};

Encoding parse(Spelling& s, const ParseContext& ctx) {
  Sinusoidal x;
  ctx.take_keys(s, kKeys, x);
  s.finish(key_names(kKeys));
  return {x};
}

[[noreturn]] void absolute(const Sinusoidal& f) {
  throw InputError(fmt::format("encoding '{}' is absolute: it has no relative feature basis", spelling(Encoding{f})));
}

}  // namespace

const FamilyInfo& Sinusoidal::info() {
  static const FamilyInfo info{
      "sinusoidal",
      {{"sinusoidal", parse}},
      {{"sinusoidal:dim=<n>,base=<B>,seed=<s>", "", "absolute, added to the input: not relative",
        "(relativity defect only)"}},
      "sinusoidal:dim=16",
      Rotary::always,
      "",
      {},
      key_rules(kKeys),
      false,
  };
  return info;
}

std::string print(const Sinusoidal& f, bool nested) { return spell("sinusoidal", print_keys(kKeys, f), nested); }

bool is_exact(const Sinusoidal&) { return false; }
bool is_orthogonal(const Sinusoidal&) { return false; }
bool is_relative(const Sinusoidal&) { return false; }
int lag_dims(const Sinusoidal&) { return 1; }
bool has_frequencies(const Sinusoidal&) { return true; }
const FrequencySchedule* schedule(const Sinusoidal&) { return nullptr; }

// The grid of its sines and cosines.
FrequencyTable frequencies(const Sinusoidal& f, std::optional<double> seq_len, Convention convention, bool float32) {
  Geometric g;
  g.dim = f.dim;
  g.base = f.base;
  return ropekit::frequencies(FrequencySchedule{g, scaling::None{}}, seq_len, convention, float32);
}

void append_blocks(const Sinusoidal&, BlockContext&) {
  throw InputError("sinusoidal is an absolute encoding: it has no relative operator (see ropekit check)");
}

Features features(const Sinusoidal& f, const Lags&) { absolute(f); }
std::int64_t feature_count(const Sinusoidal& f) { absolute(f); }

// Relativity defect of the position-position term p_m^T W p_n, W = W_q^T W_k with seeded N(0, 1/n) entries: max
// over position pairs at one lag of the change of the score, relative to the largest score.
Exactness exactness(const Sinusoidal& s, const std::vector<double>& window) {
  Exactness x;
  const auto t = frequencies(s, std::nullopt, Convention::huggingface, false);
  Rng rng(s.seed, 0x53494E5553);  // the stream "SINUS" of W = W_q^T W_k
  const int n = s.dim;
  Eigen::MatrixXd W(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) W(i, j) = rng.normal() / std::sqrt(n);
  auto p = [&](double pos) {
    Eigen::VectorXd v(n);
    for (int j = 0; j < n / 2; ++j) {
      v[2 * j] = std::sin(pos * t.theta(j, 0));
      v[2 * j + 1] = std::cos(pos * t.theta(j, 0));
    }
    return v;
  };
  double worst = 0, scale = 0;
  for (double lag : window)
    for (double m : window) {
      const double a = p(m + lag).dot(W * p(m)), b = p(lag).dot(W * p(0));
      worst = std::max(worst, std::abs(a - b));
      scale = std::max({scale, std::abs(a), std::abs(b)});
    }
  x.relativity = scale > 0 ? worst / scale : 0;
  x.group_law = x.orthogonality = x.reversibility = std::numeric_limits<double>::quiet_NaN();
  return x;
}

}  // namespace ropekit::enc
