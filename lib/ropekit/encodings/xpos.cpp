#include "ropekit/encodings/xpos.hpp"

#include <array>
#include <cmath>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

const std::array<Key<Xpos>, 3> kKeys = {{
    {"dim", &Xpos::dim, KeyKind::integer, Fallback::dim, 2, 1 << 24, true},
    {"base", &Xpos::base, KeyKind::positive, Fallback::base},
    {"scale_base", &Xpos::scale_base, KeyKind::positive},
}};

Encoding parse(Spelling& s, const ParseContext& ctx) {
  Xpos x;
  ctx.take_keys(s, kKeys, x);
  s.finish(key_names(kKeys));
  return {x};
}

FrequencyTable table(const Xpos& x, bool float32 = false) {
  Geometric g;
  g.dim = x.dim;
  g.base = x.base;
  return ropekit::frequencies(FrequencySchedule{g, scaling::None{}}, std::nullopt, Convention::huggingface, float32);
}

double zeta(const Xpos& x, Eigen::Index i) { return (2.0 * i + 0.4 * x.dim) / (1.4 * x.dim); }

}  // namespace

const FamilyInfo& Xpos::info() {
  static const FamilyInfo info{
      "xpos",
      {{"xpos", parse}},
      {{"xpos:dim=<n>,base=<B>,scale_base=<S>", "", "zeta_i^{Dp/S} R(-theta_i Dp), zeta_i = (2i + 0.4n)/(1.4n)",
        "1, zeta^{d/S} C, zeta^{d/S} S"}},
      "xpos:dim=32",
      Rotary::always,
      "",
      {},
      key_rules(kKeys),
      false,
  };
  return info;
}

std::string print(const Xpos& f, bool nested) { return spell("xpos", print_keys(kKeys, f), nested); }

bool is_exact(const Xpos&) { return true; }
bool is_orthogonal(const Xpos&) { return false; }
bool is_relative(const Xpos&) { return true; }
int lag_dims(const Xpos&) { return 1; }
bool has_frequencies(const Xpos&) { return true; }
const FrequencySchedule* schedule(const Xpos&) { return nullptr; }

// The grid under every convention (no scheme applies).
FrequencyTable frequencies(const Xpos& f, std::optional<double>, Convention, bool float32) { return table(f, float32); }

void append_blocks(const Xpos& f, BlockContext& ctx) {
  const auto& t = ctx.cache.get(&f, [&] { return table(f); });
  for (Eigen::Index i = 0; i < t.theta.rows(); ++i) {
    Block b;
    b.phase = -t.theta(i, 0) * ctx.lag;
    b.c = {std::pow(zeta(f, i), ctx.lag / f.scale_base)};
    ctx.out.push_back(std::move(b));
  }
}

Features features(const Xpos& f, const Lags& lags) {
  const auto t = table(f);
  std::vector<double> z;
  for (Eigen::Index i = 0; i < t.theta.rows(); ++i) z.push_back(zeta(f, i));
  return trig_columns(t.theta, lags, z, f.scale_base);
}

std::int64_t feature_count(const Xpos& f) { return 1 + 2 * (f.dim / 2); }

}  // namespace ropekit::enc
