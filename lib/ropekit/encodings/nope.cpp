#include "ropekit/encodings/nope.hpp"

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

Encoding parse(Spelling& s, const ParseContext& ctx) {
  Nope n;
  ctx.take_keys(s, nope_keys(), n);
  s.finish(key_names(nope_keys()));
  return {n};
}

}  // namespace

const std::array<Key<Nope>, 1>& nope_keys() {
  static const std::array<Key<Nope>, 1> keys = {{{"dim", &Nope::dim, KeyKind::integer, Fallback::member, 1, kMaxNopeDim}}};
  return keys;
}

const FamilyInfo& Nope::info() {
  static const FamilyInfo info{"nope",
                               {{"nope", parse}},
                               {{"nope:dim=<n>", "nope", "I_dim (plain nope: dim = 1)", "1"}},
                               "nope",
                               Rotary::never,
                               "",
                               {},
                               key_rules(nope_keys()),
                               false};
  return info;
}

// "nope" for the default one dim (every existing spelling), else the dim.
std::string print(const Nope& f, bool nested) {
  return f.dim == 1 ? "nope" : spell("nope", print_keys(nope_keys(), f), nested);
}

bool is_exact(const Nope&) { return true; }
bool is_orthogonal(const Nope&) { return true; }
bool is_relative(const Nope&) { return true; }
int lag_dims(const Nope&) { return 1; }
bool has_frequencies(const Nope&) { return false; }
const FrequencySchedule* schedule(const Nope&) { return nullptr; }

FrequencyTable frequencies(const Nope& f, std::optional<double>, Convention, bool) { throw_no_frequencies(Encoding{f}); }

void append_blocks(const Nope& f, BlockContext& ctx) { ctx.identity(f.dim); }

Features features(const Nope&, const Lags& lags) { return method_features(method::Nope{}, shear_params(1, true), lags); }

std::int64_t feature_count(const Nope&) { return 1; }

}  // namespace ropekit::enc
