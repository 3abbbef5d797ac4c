#include "ropekit/encodings/rope.hpp"

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

Encoding parse_rope(Spelling& s, const ParseContext& ctx) {
  Rope r{ctx.take_schedule(s)};
  s.finish(kFreqKeys);
  return {r};
}

// rope-freqs: RoPE on explicit frequencies (a list or a file); printed as rope:freqs=[...].
Encoding parse_rope_freqs(Spelling& s, const ParseContext& ctx) {
  bool given = false;
  for (const auto& [k, v] : s.params()) given = given || k == "freqs" || k == "file";
  if (!given) ctx.bad(s, "freqs", "missing", "given: freqs=[...] or file=PATH");
  Rope r{ctx.take_schedule(s)};
  s.finish("freqs, file, scaling");
  return {r};
}

}  // namespace

const FamilyInfo& Rope::info() {
  static const FamilyInfo info{
      "rope",
      {{"rope", parse_rope}, {"rope-freqs", parse_rope_freqs}},
      {{"rope:dim=<n>,base=<B>[,F=<F>,partial=<p>,scaling=<scheme>(...)]", "rope",
        "a^2 R(-theta_i Dp) per frequency, identity on the n - r unrotated dims", "1, C, S"},
       {"rope-freqs:freqs=[...] | file=<path>", "", "R(-theta_i Dp), theta_i as given", "1, C, S",
        "freqs=[...] (each > 0) | file=<path> (one frequency per line): one of them required; scaling: none, "
        "linear, llama3 or longrope (`ropekit list schemes`), default none",
        "rope-freqs:freqs=[1,0.1,0.01]"}},
      "rope:dim=32,base=1e4,F=8",
      Rotary::always,
      "",
      {"theta", "base", "factor"},
      {},
      true,
  };
  return info;
}

std::string print(const Rope& f, bool nested) { return spell("rope", schedule_keys(f.freqs), nested); }

// YaRN's and LongRoPE's attention factor a^2 != 1 scales G: not orthogonal. Dynamic NTK: G depends on T.
bool is_exact(const Rope& f) { return !is_dynamic(f.freqs); }
bool is_orthogonal(const Rope& f) {
  return !std::holds_alternative<scaling::Yarn>(f.freqs.scaling) &&
         !std::holds_alternative<scaling::LongRope>(f.freqs.scaling);
}
bool is_relative(const Rope&) { return true; }
int lag_dims(const Rope&) { return 1; }
bool has_frequencies(const Rope&) { return true; }
const FrequencySchedule* schedule(const Rope& f) { return &f.freqs; }

FrequencyTable frequencies(const Rope& f, std::optional<double> seq_len, Convention convention, bool float32) {
  return ropekit::frequencies(f.freqs, seq_len, convention, float32);
}

void append_blocks(const Rope& f, BlockContext& ctx) {
  FrequencyTable scratch;
  const auto& t = ctx.table(f.freqs, scratch);
  ctx.rotary(t, {t.attention_factor * t.attention_factor});
  ctx.identity(identity_dims(f.freqs));
}

Features features(const Rope& f, const Lags& lags) {
  return method_features(method::Rope{}, basis_params(f.freqs), lags);
}

std::int64_t feature_count(const Rope& f) { return 1 + 2 * schedule_count(f.freqs); }

}  // namespace ropekit::enc
