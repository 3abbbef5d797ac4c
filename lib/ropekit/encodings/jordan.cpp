#include "ropekit/encodings/jordan.hpp"

#include <array>
#include <cmath>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

const std::array<Key<Jordan>, 5> kKeys = {{
    {"m", &Jordan::m, KeyKind::integer, Fallback::member, 1, 32},
    {"gamma", &Jordan::gamma, KeyKind::nonnegative, Fallback::gamma},
    {"tau", &Jordan::bounded_tau, KeyKind::tau, Fallback::tau},
    {"L", &Jordan::L, KeyKind::integer, Fallback::L, 1},
    {"eta", &Jordan::eta, KeyKind::rate},
}};

Encoding parse(Spelling& s, const ParseContext& ctx) {
  Jordan j{ctx.take_schedule(s)};
  ctx.take_keys(s, kKeys, j);
  s.finish(key_names(kKeys, kFreqKeys));
  return {j};
}

// The shear rate eta = 1/L unless given. The shear is eta tau(d) with tau(d) = d / (1 + |d|/L) (bounded) or d
// (raw), Jordan-RoPE's stabilized shear for any eta (with eta = 1/L as before eta existed).
double rate(const Jordan& j) { return j.eta ? *j.eta : 1.0 / j.L; }

}  // namespace

const FamilyInfo& Jordan::info() {
  static const FamilyInfo info{
      "jordan",
      {{"jordan", parse}},
      {{"jordan:m=<m>,gamma=<g>,tau=bounded|raw,L=<L>[,eta=<eta>][,<freq keys>]",
        "jordan_rope, jordan_no_gamma, jordan_raw_tau, jordan_m3, jordan_m4",
        "a^2 e^{-gamma Dp} exp(eta tau N_m) (x) R(-theta_i Dp), eta = 1/L unless given",
        "1, (that^p/p!) E C, (that^p/p!) E S, p < m"}},
      "jordan:m=3,gamma=1e-3,tau=raw,L=64,dim=16",
      Rotary::always,
      "",
      {"theta", "gamma", "eta"},
      key_rules(kKeys),
      true,
  };
  return info;
}

std::string print(const Jordan& f, bool nested) {
  KeyValues k = print_keys(kKeys, f);
  for (auto& kv : schedule_keys(f.freqs)) k.push_back(kv);
  return spell("jordan", k, nested);
}

// The bounded shear time breaks the group law: tau(s) + tau(t) != tau(s + t).
bool is_exact(const Jordan& f) { return !f.bounded_tau && !is_dynamic(f.freqs); }
bool is_orthogonal(const Jordan&) { return false; }
bool is_relative(const Jordan&) { return true; }
int lag_dims(const Jordan&) { return 1; }
bool has_frequencies(const Jordan&) { return true; }
const FrequencySchedule* schedule(const Jordan& f) { return &f.freqs; }

FrequencyTable frequencies(const Jordan& f, std::optional<double> seq_len, Convention convention, bool float32) {
  return ropekit::frequencies(f.freqs, seq_len, convention, float32);
}

void append_blocks(const Jordan& f, BlockContext& ctx) {
  FrequencyTable scratch;
  const auto& t = ctx.table(f.freqs, scratch);
  auto c = jordan_chain(f.m, f.gamma, rate(f), ctx.lag, shear_time(ctx.lag, f.bounded_tau, f.L));
  for (double& v : c) v *= t.attention_factor * t.attention_factor;  // the scheme's a^2, as rope's
  ctx.rotary(t, c);
  ctx.identity(identity_dims(f.freqs));
}

Features features(const Jordan& f, const Lags& lags) {
  auto p = basis_params(f.freqs);
  p.train_context = f.L;
  p.eta = f.eta;
  return method_features(method::Jordan{f.m, f.gamma, f.bounded_tau}, p, lags);
}

std::int64_t feature_count(const Jordan& f) { return 1 + 2 * f.m * schedule_count(f.freqs); }

}  // namespace ropekit::enc
