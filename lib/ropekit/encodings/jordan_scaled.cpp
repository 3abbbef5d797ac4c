#include "ropekit/encodings/jordan_scaled.hpp"

#include <array>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

const std::array<Key<JordanScaled>, 3> kKeys = {{
    {"m", &JordanScaled::m, KeyKind::integer, Fallback::member, 2, 32},
    {"c", &JordanScaled::c, KeyKind::nonnegative},
    {"L", &JordanScaled::L, KeyKind::integer, Fallback::L, 1},
}};

Encoding parse(Spelling& s, const ParseContext& ctx) {
  JordanScaled j{ctx.take_schedule(s)};
  ctx.take_keys(s, kKeys, j);
  s.finish(key_names(kKeys, kFreqKeys));
  return {j};
}

}  // namespace

const FamilyInfo& JordanScaled::info() {
  static const FamilyInfo info{
      "jordan-scaled",
      {{"jordan-scaled", parse}},
      {{"jordan-scaled:m=<m>,c=<c>,L=<L>[,<freq keys>]", "jordan_scaled_m<k>[_cNNN], jordan_exact[_cNNN]",
        "a^2 e^{-c x} exp(x N_m) (x) R(-theta_i Dp), x = Dp/L", "1, (x^p/p!) e^{-cx} C, (x^p/p!) e^{-cx} S, p < m"}},
      "jordan-scaled:m=3,c=0.1,L=64,dim=16",
      Rotary::always,
      "",
      {"theta", "c"},
      key_rules(kKeys),
      true,
  };
  return info;
}

std::string print(const JordanScaled& f, bool nested) {
  KeyValues k = print_keys(kKeys, f);
  for (auto& kv : schedule_keys(f.freqs)) k.push_back(kv);
  return spell("jordan-scaled", k, nested);
}

bool is_exact(const JordanScaled& f) { return !is_dynamic(f.freqs); }
bool is_orthogonal(const JordanScaled&) { return false; }
bool is_relative(const JordanScaled&) { return true; }
int lag_dims(const JordanScaled&) { return 1; }
bool has_frequencies(const JordanScaled&) { return true; }
const FrequencySchedule* schedule(const JordanScaled& f) { return &f.freqs; }

FrequencyTable frequencies(const JordanScaled& f, std::optional<double> seq_len, Convention convention, bool float32) {
  return ropekit::frequencies(f.freqs, seq_len, convention, float32);
}

// gamma = c/L, eta = 1/L, raw shear time Dp.
void append_blocks(const JordanScaled& f, BlockContext& ctx) {
  FrequencyTable scratch;
  const auto& t = ctx.table(f.freqs, scratch);
  auto c = jordan_chain(f.m, f.c / f.L, 1.0 / f.L, ctx.lag, ctx.lag);
  for (double& v : c) v *= t.attention_factor * t.attention_factor;  // the scheme's a^2, as rope's
  ctx.rotary(t, c);
  ctx.identity(identity_dims(f.freqs));
}

Features features(const JordanScaled& f, const Lags& lags) {
  auto p = basis_params(f.freqs);
  p.train_context = f.L;
  return method_features(method::JordanScaled{f.m, f.c}, p, lags);
}

std::int64_t feature_count(const JordanScaled& f) { return 1 + 2 * f.m * schedule_count(f.freqs); }

}  // namespace ropekit::enc
