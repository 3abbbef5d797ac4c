#include "ropekit/encodings/damped.hpp"

#include <array>
#include <cmath>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

const std::array<Key<Damped>, 1> kKeys = {{
    {"gamma", &Damped::gamma, KeyKind::nonnegative, Fallback::gamma},
}};

Encoding parse(Spelling& s, const ParseContext& ctx) {
  Damped d{ctx.take_schedule(s)};
  ctx.take_keys(s, kKeys, d);
  s.finish(key_names(kKeys, kFreqKeys));
  return {d};
}

}  // namespace

const FamilyInfo& Damped::info() {
  static const FamilyInfo info{
      "damped",
      {{"damped", parse}, {"damped-rope", parse, false}},
      {{"damped:gamma=<g>[,<freq keys>]", "damped_rope, damped-rope", "e^{-gamma Dp} R(-theta_i Dp)", "1, E C, E S"}},
      "damped:gamma=1e-3,dim=32,F=8",
      Rotary::always,
      "",
      {"theta", "gamma"},
      key_rules(kKeys),
      true,
  };
  return info;
}

std::string print(const Damped& f, bool nested) {
  KeyValues k = print_keys(kKeys, f);
  for (auto& kv : schedule_keys(f.freqs)) k.push_back(kv);
  return spell("damped", k, nested);
}

bool is_exact(const Damped& f) { return !is_dynamic(f.freqs); }
bool is_orthogonal(const Damped&) { return false; }
bool is_relative(const Damped&) { return true; }
int lag_dims(const Damped&) { return 1; }
bool has_frequencies(const Damped&) { return true; }
const FrequencySchedule* schedule(const Damped& f) { return &f.freqs; }

FrequencyTable frequencies(const Damped& f, std::optional<double> seq_len, Convention convention, bool float32) {
  return ropekit::frequencies(f.freqs, seq_len, convention, float32);
}

void append_blocks(const Damped& f, BlockContext& ctx) {
  FrequencyTable scratch;
  const auto& t = ctx.table(f.freqs, scratch);
  ctx.rotary(t, {std::exp(-f.gamma * ctx.lag) * t.attention_factor * t.attention_factor});
  ctx.identity(identity_dims(f.freqs));
}

Features features(const Damped& f, const Lags& lags) {
  auto p = basis_params(f.freqs);
  p.gamma = f.gamma;
  return method_features(method::DampedRope{f.gamma}, p, lags);
}

std::int64_t feature_count(const Damped& f) { return 1 + 2 * schedule_count(f.freqs); }

}  // namespace ropekit::enc
