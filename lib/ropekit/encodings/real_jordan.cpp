#include "ropekit/encodings/real_jordan.hpp"

#include <array>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

Encoding parse(Spelling& s, const ParseContext& ctx) {
  RealJordan j;
  ctx.take_keys(s, real_jordan_keys(), j);
  s.finish(key_names(real_jordan_keys()));
  return {j};
}

}  // namespace

const std::array<Key<RealJordan>, 3>& real_jordan_keys() {
  static const std::array<Key<RealJordan>, 3> keys = {{
      {"gamma", &RealJordan::gamma, KeyKind::nonnegative, Fallback::gamma},
      {"tau", &RealJordan::bounded_tau, KeyKind::tau, Fallback::tau},
      {"L", &RealJordan::L, KeyKind::integer, Fallback::L, 1},
  }};
  return keys;
}

const FamilyInfo& RealJordan::info() {
  static const FamilyInfo info{
      "real-jordan",
      {{"real-jordan", parse}},
      {{"real-jordan:gamma=<g>,tau=bounded|raw,L=<L>", "real_jordan", "e^{-gamma Dp} [[1, tau/L], [0, 1]]",
        "1, E, that E"}},
      "real-jordan:gamma=0.01,tau=raw,L=64",
      Rotary::never,
      "",
      {"gamma"},
      key_rules(real_jordan_keys()),
      false,
  };
  return info;
}

std::string print(const RealJordan& f, bool nested) {
  return spell("real-jordan", print_keys(real_jordan_keys(), f), nested);
}

bool is_exact(const RealJordan& f) { return !f.bounded_tau; }
bool is_orthogonal(const RealJordan&) { return false; }
bool is_relative(const RealJordan&) { return true; }
int lag_dims(const RealJordan&) { return 1; }
bool has_frequencies(const RealJordan&) { return false; }
const FrequencySchedule* schedule(const RealJordan&) { return nullptr; }

FrequencyTable frequencies(const RealJordan& f, std::optional<double>, Convention, bool) {
  throw_no_frequencies(Encoding{f});
}

void append_blocks(const RealJordan& f, BlockContext& ctx) {
  ctx.out.push_back(Block{false, 0, jordan_chain(2, f.gamma, 1.0 / f.L, ctx.lag, shear_time(ctx.lag, f.bounded_tau, f.L)), 1});
}

Features features(const RealJordan& f, const Lags& lags) {
  return method_features(method::RealJordan{f.gamma, f.bounded_tau}, shear_params(f.L, f.bounded_tau, f.gamma), lags);
}

std::int64_t feature_count(const RealJordan&) { return 3; }

}  // namespace ropekit::enc
