#pragma once
// RoPE on the M = max(1, floor(F/k)) highest frequencies (the fixed-basis control `rope_matched_m<k>`).

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct RopeMatched {
  FrequencySchedule freqs;
  int k = 2;
  static const FamilyInfo& info();
};

std::string print(const RopeMatched& f, bool nested);
bool is_exact(const RopeMatched& f);
bool is_orthogonal(const RopeMatched& f);
bool is_relative(const RopeMatched& f);
int lag_dims(const RopeMatched& f);
bool has_frequencies(const RopeMatched& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const RopeMatched& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const RopeMatched& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const RopeMatched& f, BlockContext& ctx);
Features features(const RopeMatched& f, const Lags& lags);
std::int64_t feature_count(const RopeMatched& f);

}  // namespace ropekit::enc
