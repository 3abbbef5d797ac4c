#include "ropekit/encodings/alibi.hpp"

#include <array>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

const std::array<Key<Alibi>, 2> kKeys = {{
    {"slope", &Alibi::slope, KeyKind::positive},
    {"L", &Alibi::L, KeyKind::integer, Fallback::L, 1},
}};

Encoding parse(Spelling& s, const ParseContext& ctx) {
  Alibi a;
  ctx.take_keys(s, kKeys, a);
  s.finish(key_names(kKeys));
  return {a};
}

}  // namespace

const FamilyInfo& Alibi::info() {
  static const FamilyInfo info{
      "alibi",
      {{"alibi", parse}},
      {{"alibi:slope=<m>,L=<L>", "alibi", "unipotent [[1, -m Dp], [0, 1]]", "1, x"}},
      "alibi:slope=0.5,L=64",
      Rotary::never,
      "",
      {},
      key_rules(kKeys),
      false,
  };
  return info;
}

std::string print(const Alibi& f, bool nested) { return spell("alibi", print_keys(kKeys, f), nested); }

bool is_exact(const Alibi&) { return true; }
bool is_orthogonal(const Alibi&) { return false; }
bool is_relative(const Alibi&) { return true; }
int lag_dims(const Alibi&) { return 1; }
bool has_frequencies(const Alibi&) { return false; }
const FrequencySchedule* schedule(const Alibi&) { return nullptr; }

FrequencyTable frequencies(const Alibi& f, std::optional<double>, Convention, bool) {
  throw_no_frequencies(Encoding{f});
}

void append_blocks(const Alibi& f, BlockContext& ctx) {
  ctx.out.push_back(Block{false, 0, {1.0, -f.slope * ctx.lag}, 1});
}

Features features(const Alibi& f, const Lags& lags) {
  return method_features(method::Alibi{}, shear_params(f.L, true), lags);
}

std::int64_t feature_count(const Alibi&) { return 2; }

}  // namespace ropekit::enc
