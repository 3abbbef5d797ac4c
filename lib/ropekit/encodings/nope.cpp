#include "ropekit/encodings/nope.hpp"

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

Encoding parse(Spelling& s, const ParseContext&) {
  s.finish("");
  return {Nope{}};
}

}  // namespace

const FamilyInfo& Nope::info() {
  static const FamilyInfo info{"nope", {{"nope", parse}}, {{"nope", "nope", "1", "1"}}, "nope"};
  return info;
}

std::string print(const Nope&, bool) { return "nope"; }

bool is_exact(const Nope&) { return true; }
bool is_orthogonal(const Nope&) { return true; }
bool is_relative(const Nope&) { return true; }
int lag_dims(const Nope&) { return 1; }
bool has_frequencies(const Nope&) { return false; }
const FrequencySchedule* schedule(const Nope&) { return nullptr; }

FrequencyTable frequencies(const Nope& f, std::optional<double>, Convention, bool) { throw_no_frequencies(Encoding{f}); }

void append_blocks(const Nope&, BlockContext& ctx) { ctx.identity(1); }

Features features(const Nope&, const Lags& lags) { return method_features(method::Nope{}, shear_params(1, true), lags); }

std::int64_t feature_count(const Nope&) { return 1; }

}  // namespace ropekit::enc
