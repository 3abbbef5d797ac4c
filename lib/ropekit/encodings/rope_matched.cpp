#include "ropekit/encodings/rope_matched.hpp"

#include <algorithm>
#include <array>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

const std::array<Key<RopeMatched>, 1> kKeys = {{
    {"k", &RopeMatched::k, KeyKind::integer, Fallback::member, 1},
}};

Encoding parse(Spelling& s, const ParseContext& ctx) {
  RopeMatched r{ctx.take_schedule(s)};
  ctx.take_keys(s, kKeys, r);
  s.finish(key_names(kKeys, kFreqKeys));
  return {r};
}

// The M = max(1, floor(F/k)) highest frequencies of the schedule: geometric grids descend from theta_0 = 1 when
// base > 1, so the first M.
FrequencyTable matched(const RopeMatched& r, std::optional<double> seq_len, Convention convention = Convention::huggingface,
                       bool float32 = false) {
  FrequencyTable t = ropekit::frequencies(r.freqs, seq_len, convention, float32);
  const Eigen::Index M = std::max<Eigen::Index>(1, t.theta.rows() / r.k);
  t.theta.conservativeResize(M, Eigen::NoChange);
  t.unscaled.conservativeResize(M, Eigen::NoChange);
  return t;
}

}  // namespace

const FamilyInfo& RopeMatched::info() {
  static const FamilyInfo info{
      "rope-matched",
      {{"rope-matched", parse}},
      {{"rope-matched:k=<k>[,<freq keys>]", "rope_matched_m<k>", "a^2 R(-theta_i Dp), the max(1, F/k) highest theta_i",
        "1, C_0..C_{M-1}, S_0..S_{M-1}"}},
      "rope-matched:k=3,dim=32,F=8",
      Rotary::always,
      "",
      {},
      key_rules(kKeys),
      true,
  };
  return info;
}

std::string print(const RopeMatched& f, bool nested) {
  KeyValues k = print_keys(kKeys, f);
  for (auto& kv : schedule_keys(f.freqs)) k.push_back(kv);
  return spell("rope-matched", k, nested);
}

bool is_exact(const RopeMatched&) { return true; }
bool is_orthogonal(const RopeMatched&) { return true; }
bool is_relative(const RopeMatched&) { return true; }
int lag_dims(const RopeMatched&) { return 1; }
bool has_frequencies(const RopeMatched&) { return true; }
const FrequencySchedule* schedule(const RopeMatched& f) { return &f.freqs; }

FrequencyTable frequencies(const RopeMatched& f, std::optional<double> seq_len, Convention convention, bool float32) {
  return matched(f, seq_len, convention, float32);
}

void append_blocks(const RopeMatched& f, BlockContext& ctx) {
  FrequencyTable scratch;
  const auto& t = ctx.per_lag(f.freqs) ? (scratch = matched(f, std::abs(ctx.lag) + 1))
                                       : ctx.cache.get(&f, [&] { return matched(f, ctx.seq_len); });
  ctx.rotary(t, {t.attention_factor * t.attention_factor});  // the scheme's a^2, as rope's
}

Features features(const RopeMatched& f, const Lags& lags) {
  return method_features(method::RopeMatched{f.k}, basis_params(f.freqs), lags);
}

std::int64_t feature_count(const RopeMatched& f) {
  return 1 + 2 * std::max<std::int64_t>(1, schedule_count(f.freqs) / f.k);
}

}  // namespace ropekit::enc
