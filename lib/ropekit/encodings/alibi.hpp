#pragma once
// ALiBi as the unipotent block U(Dp) = [[1, -slope Dp], [0, 1]] (GRAPE); features 1, x = Dp/L.

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct Alibi {
  double slope = 1;
  int L = 1024;
  static const FamilyInfo& info();
};

std::string print(const Alibi& f, bool nested);
bool is_exact(const Alibi& f);
bool is_orthogonal(const Alibi& f);
bool is_relative(const Alibi& f);
int lag_dims(const Alibi& f);
bool has_frequencies(const Alibi& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Alibi& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Alibi& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Alibi& f, BlockContext& ctx);
Features features(const Alibi& f, const Lags& lags);
std::int64_t feature_count(const Alibi& f);

}  // namespace ropekit::enc
